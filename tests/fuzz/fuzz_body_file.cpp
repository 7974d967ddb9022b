// libFuzzer target: the body-file reader (`--scenario file:PATH`). Any input must either load or
// throw UsageError; a crash, a hang or a sanitizer report is a bug. Bodies that load must satisfy
// what the reader promises: ids 0..N-1, finite values, non-negative masses, the header's count, and
// a species per body or none.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>

#include "core/body_io.h"
#include "core/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  murmur::core::StateHeader h;
  try {
    const murmur::core::Bodies b = murmur::core::readBodies(in, "file:fuzz", &h);
    if (b.size() == 0 || (h.hasBodies && h.bodies != b.size())) std::abort();
    if (!b.species.empty() && b.species.size() != b.size()) std::abort();
    for (size_t i = 0; i < b.size(); ++i) {
      if (b.id[i] != i || !(b.pos[i].w >= 0.0f) || !std::isfinite(b.pos[i].x) || !std::isfinite(b.vel[i].z))
        std::abort();
    }
  } catch (const murmur::core::UsageError&) {
  }
  return 0;
}
