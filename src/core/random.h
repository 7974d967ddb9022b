// Counter-based random numbers (docs/design.md#random-numbers): Philox4x32-10 (Salmon et al., "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011), a pure function of a 128-bit counter and a 64-bit
// key. A body's draws are a function of (seed, body id, step, draw index) alone, so every engine,
// pipeline order and number of ranks draws the same bits for the same body in the same step: the
// counter is (id, step low, step high, index), the key the seed. Each call gives four 32-bit
// words; a rule that needs more takes the next index.
#pragma once

#include <cstdint>

#include "core/hd.h"

namespace murmur::core {

struct Draw4 {
  uint32_t w[4];
};

// The high and low words of the 64-bit product a * b.
MURMUR_HD void mulHiLo32(uint32_t a, uint32_t b, uint32_t& hi, uint32_t& lo) {
#if defined(__CUDA_ARCH__)
  hi = __umulhi(a, b);
  lo = a * b;
#else
  const uint64_t p = uint64_t(a) * uint64_t(b);
  hi = static_cast<uint32_t>(p >> 32);
  lo = static_cast<uint32_t>(p);
#endif
}

// Philox4x32 with 10 rounds: counter c, key (k0, k1). The published known-answer vectors are in
// tests/core/test_random.cpp.
MURMUR_HD Draw4 philox4x32_10(Draw4 c, uint32_t k0, uint32_t k1) {
  constexpr uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;     // the round multipliers
  constexpr uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;  // the key schedule's increments
  for (int round = 0; round < 10; ++round) {
    if (round > 0) k0 += kWeyl0, k1 += kWeyl1;
    uint32_t hi0, lo0, hi1, lo1;
    mulHiLo32(kMul0, c.w[0], hi0, lo0);
    mulHiLo32(kMul1, c.w[2], hi1, lo1);
    c = Draw4{{hi1 ^ c.w[1] ^ k0, lo1, hi0 ^ c.w[3] ^ k1, lo0}};
  }
  return c;
}

// The four words of draw `index` of body `id` at step `step` under `seed`.
MURMUR_HD Draw4 bodyDraw(uint64_t seed, uint32_t id, uint64_t step, uint32_t index) {
  return philox4x32_10(Draw4{{id, static_cast<uint32_t>(step), static_cast<uint32_t>(step >> 32), index}},
                       static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
}

// A word as a float in [0, 1): its top 24 bits, exactly representable, times 2^-24.
MURMUR_HD float uniform01(uint32_t word) { return static_cast<float>(word >> 8) * (1.0f / 16777216.0f); }
// The same in (0, 1], for a logarithm or a division.
MURMUR_HD float uniform01Open0(uint32_t word) { return static_cast<float>((word >> 8) + 1u) * (1.0f / 16777216.0f); }

// Where a step's draws come from: the ids of the bodies in the order a pipeline holds them, the
// step being taken (the engine's step count before it: the first step is step 0) and the run's
// seed (SimParams::seed). Every pipeline hands its rule's finish the draws of the body it
// finishes (drawsOf), so that they follow the body, not its slot.
struct DrawKeys {
  const uint32_t* id = nullptr;
  uint64_t step = 0;
  uint64_t seed = 0;
};

// One body's draws in one step: draws(index) is bodyDraw(seed, id, step, index).
struct BodyDraws {
  uint64_t seed;
  uint32_t id;
  uint64_t step;
  MURMUR_HD Draw4 operator()(uint32_t index) const { return bodyDraw(seed, id, step, index); }
};

// The draws of the body in slot i. Rules that draw nothing (Rule::kDraws false) do not read the id.
template <typename Rule>
MURMUR_HD BodyDraws drawsOf(const DrawKeys& k, uint32_t i) {
  if constexpr (Rule::kDraws) return BodyDraws{k.seed, loadReadOnly(k.id + i), k.step};
  return BodyDraws{k.seed, 0u, k.step};
}

}  // namespace murmur::core
