#include "core/splat.h"

#include <algorithm>

namespace murmur::core {

namespace {

// The CPU's atomicMin on a 64-bit key: a compare-and-swap loop that gives up as soon as the
// pixel already holds a nearer (smaller) key, which is most of the time in a dense frame.
inline void atomicMinKey(uint64_t* slot, uint64_t key) {
  uint64_t old = __atomic_load_n(slot, __ATOMIC_RELAXED);
  while (key < old && !__atomic_compare_exchange_n(slot, &old, key, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace

void clearSplat(uint64_t* keys, size_t numPixels) { std::fill(keys, keys + numPixels, kSplatEmpty); }

void splatBodies(const SplatView& v, const Vec4* pos, const Vec4* vel, const uint32_t* id, size_t n,
                 uint64_t* keys) {
  if (v.width <= 0 || v.height <= 0) return;
  const long long count = static_cast<long long>(n);
#pragma omp parallel for schedule(static)
  for (long long i = 0; i < count; ++i) {
    SplatBody s;
    if (!splatProject(v, pos[i], vel[i], id[i], s)) continue;
    if (splatIsPoint(v, s)) {
      uint32_t pixel;
      uint64_t key;
      if (splatPointPixel(v, s, pixel, key)) atomicMinKey(keys + pixel, key);
    } else {
      splatDisc(v, s, [keys](uint32_t pixel, uint64_t key) { atomicMinKey(keys + pixel, key); });
    }
  }
}

}  // namespace murmur::core
