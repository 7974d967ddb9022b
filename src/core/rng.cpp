#include "core/rng.h"

#include <array>
#include <cstring>

namespace murmur::core {

namespace {

// A 256 x 256 matrix over GF(2), by columns: column j is the image of state bit j (4 words).
struct BitMatrix {
  std::array<std::array<uint64_t, 4>, 256> col{};

  std::array<uint64_t, 4> apply(const uint64_t v[4]) const {
    std::array<uint64_t, 4> out{};
    for (int j = 0; j < 256; ++j) {
      if (!((v[j / 64] >> (j % 64)) & 1u)) continue;
      for (int w = 0; w < 4; ++w) out[static_cast<size_t>(w)] ^= col[static_cast<size_t>(j)][static_cast<size_t>(w)];
    }
    return out;
  }
  BitMatrix times(const BitMatrix& b) const {  // this * b
    BitMatrix r;
    for (size_t j = 0; j < 256; ++j) r.col[j] = apply(b.col[j].data());
    return r;
  }
};

// The transition and its powers T^(2^p), p = 0..63, made once.
const std::array<BitMatrix, 64>& transitionPowers() {
  static const std::array<BitMatrix, 64> powers = [] {
    std::array<BitMatrix, 64> m;
    for (int j = 0; j < 256; ++j) {
      uint64_t s[4] = {0, 0, 0, 0};
      s[j / 64] = uint64_t(1) << (j % 64);
      Rng::transition(s);
      std::memcpy(m[0].col[static_cast<size_t>(j)].data(), s, sizeof s);
    }
    for (size_t p = 1; p < m.size(); ++p) m[p] = m[p - 1].times(m[p - 1]);
    return m;
  }();
  return powers;
}

}  // namespace

void Rng::advance(uint64_t k) {
  if (k < 256) {  // cheaper by hand
    for (uint64_t i = 0; i < k; ++i) transition(s_);
    return;
  }
  const std::array<BitMatrix, 64>& powers = transitionPowers();
  for (size_t p = 0; p < 64; ++p) {
    if (!((k >> p) & 1u)) continue;
    const std::array<uint64_t, 4> next = powers[p].apply(s_);
    std::memcpy(s_, next.data(), sizeof s_);
  }
}

}  // namespace murmur::core
