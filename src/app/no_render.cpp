// The viewer of a build without the renderer (MURMUR_ENABLE_RENDER=OFF): says so and runs the
// same simulation headless.
#include <cstdio>

#include "app/run.h"

namespace murmur::app {
#if !defined(MURMUR_HAVE_RENDER)
int runViewer(const Options& o) {
  std::fprintf(stderr, "murmur: this build has no renderer (built with MURMUR_ENABLE_RENDER=OFF); running headless\n");
  Options h = o;
  h.mode = Mode::Headless;
  return runHeadless(h);
}
#endif
}  // namespace murmur::app
