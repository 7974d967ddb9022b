// The counter-based draws on the device are the host's bits (core/random.h): for ids spread over
// the whole 32-bit range, steps past 2^32 and several draw indices and seeds.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "core/random.h"
#include "cuda/random_draws.h"
#include "cuda_test_helpers.h"

using namespace murmur;

TEST(CudaRandom, TheDeviceDrawsTheHostsBits) {
  MURMUR_SKIP_WITHOUT_CUDA();
  std::vector<uint32_t> ids;
  for (uint32_t k = 0; k < 100000; ++k) ids.push_back(k * 42929u);  // spread over 2^32
  ids.push_back(0xffffffffu);
  for (const uint64_t seed : {uint64_t(0), uint64_t(2024), uint64_t(0xfedcba9876543210ull)})
    for (const uint64_t step : {uint64_t(0), uint64_t(1), uint64_t(123456789012ull)})
      for (const uint32_t index : {0u, 1u, 7u}) {
        const std::vector<core::Draw4> dev = cuda::bodyDrawsOnDevice(seed, step, index, ids);
        ASSERT_EQ(dev.size(), ids.size());
        int bad = 0;
        for (size_t k = 0; k < ids.size() && bad < 3; ++k) {
          const core::Draw4 host = core::bodyDraw(seed, ids[k], step, index);
          for (int w = 0; w < 4; ++w)
            if (dev[k].w[w] != host.w[w]) {
              ++bad;
              ADD_FAILURE() << "seed " << seed << " step " << step << " index " << index << " id " << ids[k]
                            << " word " << w << ": device " << dev[k].w[w] << ", host " << host.w[w];
            }
        }
      }
}
