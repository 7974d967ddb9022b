#include "app/openmp_policy.h"

#include <cstdlib>

#include <unistd.h>

namespace murmur::app {

void preferPassiveOpenMpWait(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr) return;
  if (setenv("OMP_WAIT_POLICY", "passive", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // Still here: the program could not be started again (no /proc, say). The variable stays set,
  // which is harmless, and the run goes on with the default policy.
}

}  // namespace murmur::app
