// Exact neighbour sets on the GPU with FMA contraction allowed in the boids kernels: pairs placed
// where a contracted d^2 and the CPU's rounded d^2 fall on opposite sides of r^2 must be decided
// like the CPU by every pipeline; and the benchmark's textbook coherent baseline agrees with the
// CPU engine per id (it is a yardstick only if it computes the same flock).
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/cpu_engine.h"
#include "core/rng.h"
#include "cuda/cuda_engine.h"
#include "cuda/textbook_coherent.h"
#include "cuda_test_helpers.h"

using namespace murmur;
using core::Bodies;
using core::Pipeline;
using core::SimParams;
using core::Vec4;

namespace {

constexpr double kRel = 1e-5;
constexpr double kAbsFloor = 1e-5;

// d^2 as the CPU rounds it, and the two FMA chains nvcc forms from it when it contracts.
float rounded(float x, float y, float z) {
  const float xx = x * x, yy = y * y, zz = z * z;
  return (xx + yy) + zz;
}
float contractedForward(float x, float y, float z) { return std::fma(z, z, std::fma(y, y, x * x)); }
float contractedMixed(float x, float y, float z) { return std::fma(z, z, x * x + y * y); }

// Pairs on a lattice 4 radii apart (no pair sees another), each at a distance where the CPU and
// any contraction disagree about d^2 < r^2: both ways round, half each.
Bodies borderlinePairs(const SimParams& p, size_t pairs) {
  const float r = core::searchRadius(p);
  const float r2 = r * r;
  core::Rng rng(77);
  Bodies b;
  b.resize(2 * pairs);
  size_t found = 0;
  while (found < pairs) {
    const int side = 8;
    const float spacing = 4.0f * r;
    const Vec4 a{(float(found % side) - side / 2 + 0.37f) * spacing, (float(found / side % side) - side / 2 + 0.41f) * spacing,
                 (float(found / (side * side)) - side / 2 + 0.29f) * spacing, 1.0f};
    const double z = rng.uniform(-1.0, 1.0), phi = rng.uniform(0.0, 2.0 * test::kPi), s = std::sqrt(1.0 - z * z);
    const Vec4 c{a.x + float(r * s * std::cos(phi)), a.y + float(r * s * std::sin(phi)), a.z + float(r * z), 1.0f};
    const float dx = c.x - a.x, dy = c.y - a.y, dz = c.z - a.z;
    const bool cpuInside = rounded(dx, dy, dz) < r2;
    const bool wantInside = found % 2 == 0;
    if (cpuInside != wantInside) continue;
    if ((contractedForward(dx, dy, dz) < r2) == cpuInside || (contractedMixed(dx, dy, dz) < r2) == cpuInside)
      continue;
    b.pos[2 * found] = a;
    b.pos[2 * found + 1] = c;
    b.vel[2 * found] = Vec4{0.5f, 0.0f, 0.0f, 0.0f};
    b.vel[2 * found + 1] = Vec4{0.0f, 0.5f, 0.0f, 0.0f};
    ++found;
  }
  for (size_t i = 0; i < b.size(); ++i) b.id[i] = static_cast<uint32_t>(i);
  return b;
}

void expectStepMatchesCpu(core::Engine& gpu, const SimParams& p, const Bodies& start, const std::string& what) {
  auto cpu = core::createCpuEngine(p);
  gpu.reset(start);
  cpu->reset(start);
  const core::NeighbourStats gs = gpu.neighbourStats(), cs = cpu->neighbourStats();
  EXPECT_EQ(gs.meanNeighbours, cs.meanNeighbours) << what;
  EXPECT_EQ(gs.meanCandidates, cs.meanCandidates) << what;
  gpu.step(1);
  cpu->step(1);
  std::string report;
  const size_t bad = test::countStateMismatches(gpu.readBodies(), cpu->readBodies(), kRel, kAbsFloor, kAbsFloor,
                                                &report);
  EXPECT_EQ(bad, 0u) << what << ": " << bad << " of " << start.size() << " bodies differ from the CPU" << report;
}

class BoidsExact : public test::CudaTest {};

TEST_F(BoidsExact, BorderlinePairsAreDecidedLikeTheCpu) {
  SimParams p = core::defaultParams();
  const Bodies start = borderlinePairs(p, 256);
  // Half the pairs are neighbours on the CPU: the test world does exercise both decisions.
  auto cpu = core::createCpuEngine(p);
  cpu->reset(start);
  EXPECT_EQ(cpu->neighbourStats().meanNeighbours, 0.5);
  for (Pipeline pipe : test::boidsPipelines())
    for (int width : {1, 2}) {
      p.pipeline = pipe;
      p.cellWidthFactor = width;
      auto gpu = cuda::createCudaEngine(p);
      expectStepMatchesCpu(*gpu, p, start, std::string(core::toString(pipe)) + " w" + std::to_string(width));
    }
  for (int width : {1, 2}) {
    p.pipeline = Pipeline::Coherent;
    p.cellWidthFactor = width;
    auto textbook = cuda::createTextbookCoherentEngine(p);
    expectStepMatchesCpu(*textbook, p, start, "textbook w" + std::to_string(width));
  }
}

TEST_F(BoidsExact, TextbookMatchesCpuAtEdgeSizesAndBothWidths) {
  for (int width : {1, 2})
    for (size_t n : {size_t(1), size_t(31), size_t(32), size_t(33), size_t(1000), (size_t(1) << 17) + 3}) {
      SimParams p = core::defaultParams();
      p.pipeline = Pipeline::Coherent;
      p.cellWidthFactor = width;
      p.halfSize = test::denseHalfSize(n, p);
      auto textbook = cuda::createTextbookCoherentEngine(p);
      expectStepMatchesCpu(*textbook, p, test::boidBodies(n, p, 500 + n),
                           "n " + std::to_string(n) + " w" + std::to_string(width));
    }
}

TEST_F(BoidsExact, TextbookMatchesCpuAtEveryBlockSizeOverSeveralSteps) {
  SimParams p = core::defaultParams();
  p.pipeline = Pipeline::Coherent;
  p.halfSize = test::denseHalfSize(2003, p);
  const Bodies start = test::boidBodies(2003, p, 42);
  for (int block = core::kMinBlockSize; block <= core::kMaxBlockSize; block += 32) {
    p.blockSize = block;
    auto textbook = cuda::createTextbookCoherentEngine(p);
    expectStepMatchesCpu(*textbook, p, start, "block " + std::to_string(block));
  }
  // Several steps: the state stays in cell order between steps and ids travel with the bodies.
  // Each step starts the CPU from the baseline's state, so rounding does not compound.
  auto textbook = cuda::createTextbookCoherentEngine(p);
  auto cpu = core::createCpuEngine(p);
  textbook->reset(start);
  for (int s = 0; s < 5; ++s) {
    cpu->reset(textbook->readBodies());
    textbook->step(1);
    cpu->step(1);
    std::string report;
    EXPECT_EQ(test::countStateMismatches(textbook->readBodies(), cpu->readBodies(), kRel, kAbsFloor, kAbsFloor,
                                         &report),
              0u)
        << "step " << s << report;
  }
}

TEST_F(BoidsExact, TextbookRejectsGravity) {
  SimParams p = core::defaultParams();
  p.force = core::ForceMode::Gravity;
  EXPECT_THROW(cuda::createTextbookCoherentEngine(p), std::invalid_argument);
}

}  // namespace
