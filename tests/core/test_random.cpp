// The counter-based generator (core/random.h): the published known answers of Philox4x32-10, and
// statistical tests of the draws along body ids, steps, draw indices and seeds that a broken
// generator fails (the last test shows one that does).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "core/random.h"

using namespace murmur::core;

namespace {

// One word of a generator's output for sample k of a sequence.
using Word = std::function<uint32_t(uint32_t k)>;

// Pearson's chi-square of the top 8 bits of n words over 256 bins.
double chiSquare256(const Word& word, uint32_t n) {
  std::vector<double> bins(256, 0.0);
  for (uint32_t k = 0; k < n; ++k) bins[word(k) >> 24] += 1;
  const double expect = double(n) / 256.0;
  double chi = 0;
  for (double b : bins) chi += (b - expect) * (b - expect) / expect;
  return chi;
}

// The chi-square of consecutive pairs (word k, word k + 1) over 16 x 16 bins of their top 4 bits:
// a sequence equidistributed alone but with structure between neighbours fails it.
double pairChiSquare256(const Word& word, uint32_t n) {
  std::vector<double> bins(256, 0.0);
  for (uint32_t k = 0; k < n; ++k) bins[(word(2 * k) >> 28) * 16 + (word(2 * k + 1) >> 28)] += 1;
  const double expect = double(n) / 256.0;
  double chi = 0;
  for (double b : bins) chi += (b - expect) * (b - expect) / expect;
  return chi;
}

// Correlation of word k with word k + 1 (as uniforms).
double lagOneCorrelation(const Word& word, uint32_t n) {
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const double x = uniform01(word(k)), y = uniform01(word(k + 1));
    sx += x, sy += y, sxx += x * x, syy += y * y, sxy += x * y;
  }
  const double cov = sxy / n - (sx / n) * (sy / n);
  return cov / std::sqrt((sxx / n - (sx / n) * (sx / n)) * (syy / n - (sy / n) * (sy / n)));
}

// 255 degrees of freedom: mean 255, standard deviation sqrt(510) = 22.6. Six deviations either way
// (a good generator leaves this band about once in 10^9 runs; fixed seeds make the test
// deterministic anyway).
constexpr double kChiLo = 255.0 - 6 * 22.6, kChiHi = 255.0 + 6 * 22.6;
constexpr uint32_t kN = 1u << 20;

void expectRandom(const Word& word, const char* along) {
  const double chi = chiSquare256(word, kN);
  EXPECT_GT(chi, kChiLo) << along << ": too even to be random";
  EXPECT_LT(chi, kChiHi) << along;
  const double pairs = pairChiSquare256(word, kN / 2);
  EXPECT_GT(pairs, kChiLo) << along;
  EXPECT_LT(pairs, kChiHi) << along;
  EXPECT_LT(std::fabs(lagOneCorrelation(word, kN)), 6.0 / std::sqrt(double(kN))) << along;
  // Every bit set half the time.
  for (int bit = 0; bit < 32; ++bit) {
    double ones = 0;
    for (uint32_t k = 0; k < kN / 4; ++k) ones += (word(k) >> bit) & 1u;
    EXPECT_LT(std::fabs(ones - kN / 8.0), 6.0 * std::sqrt(kN / 4.0) / 2.0) << along << ": bit " << bit;
  }
}

}  // namespace

// Random123's known-answer vectors for Philox4x32-10 (counter, key, output).
TEST(Random, PhiloxGivesThePublishedAnswers) {
  struct Kat {
    Draw4 counter;
    uint32_t k0, k1;
    Draw4 out;
  };
  const Kat kats[] = {
      {{{0, 0, 0, 0}}, 0, 0, {{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}}},
      {{{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff, 0xffffffff,
       {{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}}},
      {{{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822, 0x299f31d0,
       {{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}}},
  };
  for (const Kat& k : kats) {
    const Draw4 got = philox4x32_10(k.counter, k.k0, k.k1);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(got.w[i], k.out.w[i]) << "word " << i;
  }
}

// The draws of a body are the counter (id, step, index) under the key (seed): a pure function.
TEST(Random, ABodysDrawIsAFunctionOfSeedIdStepAndIndex) {
  const Draw4 a = bodyDraw(2024, 17, 5000000000ull, 3);
  const Draw4 b = philox4x32_10(Draw4{{17, uint32_t(5000000000ull), uint32_t(5000000000ull >> 32), 3}}, 2024, 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.w[i], b.w[i]);
  const Draw4 again = bodyDraw(2024, 17, 5000000000ull, 3);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(a.w[i], again.w[i]);
  // Each input moves the output.
  for (const Draw4 other : {bodyDraw(2025, 17, 5000000000ull, 3), bodyDraw(2024, 18, 5000000000ull, 3),
                            bodyDraw(2024, 17, 5000000001ull, 3), bodyDraw(2024, 17, 5000000000ull, 4),
                            bodyDraw(2024ull | (1ull << 40), 17, 5000000000ull, 3)})
    EXPECT_NE(a.w[0], other.w[0]);
}

TEST(Random, UniformAlongIdsStepsIndicesAndSeeds) {
  expectRandom([](uint32_t k) { return bodyDraw(7, k, 300, 0).w[0]; }, "along ids");
  expectRandom([](uint32_t k) { return bodyDraw(7, k / 4, 300, 0).w[k % 4]; }, "along the four words");
  expectRandom([](uint32_t k) { return bodyDraw(7, 12345, k, 0).w[1]; }, "along steps");
  expectRandom([](uint32_t k) { return bodyDraw(7, 12345, 300, k).w[2]; }, "along draw indices");
  expectRandom([](uint32_t k) { return bodyDraw(k, 12345, 300, 0).w[3]; }, "along seeds");
}

// Floats in [0, 1) and (0, 1]: the ends are reached exactly and never passed.
TEST(Random, UniformFloatsStayInTheirInterval) {
  EXPECT_EQ(uniform01(0u), 0.0f);
  EXPECT_LT(uniform01(0xffffffffu), 1.0f);
  EXPECT_GT(uniform01Open0(0u), 0.0f);
  EXPECT_EQ(uniform01Open0(0xffffffffu), 1.0f);
  double sum = 0;
  for (uint32_t k = 0; k < kN; ++k) sum += uniform01(bodyDraw(1, k, 0, 0).w[0]);
  EXPECT_NEAR(sum / kN, 0.5, 6.0 * std::sqrt(1.0 / 12.0 / kN));
}

// The tests above catch a broken generator: a Weyl sequence (the id times the golden ratio) is
// equidistributed word by word but neighbours lie on a few lines, which the pair test sees; one
// round of Philox leaves the low counter word's structure in the output.
TEST(Random, TheTestsCatchBrokenGenerators) {
  const Word weyl = [](uint32_t k) { return k * 0x9E3779B9u; };
  const double chi = chiSquare256(weyl, kN);
  EXPECT_LT(chi, kChiHi);  // alone it looks uniform...
  const double pairs = pairChiSquare256(weyl, kN / 2);
  EXPECT_FALSE(pairs > kChiLo && pairs < kChiHi) << pairs;  // ...but not in pairs
  const Word oneRound = [](uint32_t k) {
    uint32_t hi, lo;
    mulHiLo32(0xD2511F53u, k, hi, lo);
    return lo;  // word 3 of one round: the low half of a product of the counter
  };
  EXPECT_FALSE(pairChiSquare256(oneRound, kN / 2) < kChiHi && std::fabs(lagOneCorrelation(oneRound, kN)) <
                                                                   6.0 / std::sqrt(double(kN)));
}
