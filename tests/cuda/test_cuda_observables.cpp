// The GPU observables (cuda/observables.h) against the CPU reference (core/observables.h).
// Tolerances (docs/observables.md): counts (neighbours, flocks, size bins) equal exactly; the
// boids means and gravity's sums within 1e-9 relative (the same float terms summed in double in
// another order); the potential within 1e-5 (each pair in float on the GPU, in double on the
// CPU); Lagrangian radii within 1e-5 (distances in float).
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstring>
#include <set>
#include <sstream>

#include "core/cpu_engine.h"
#include "core/observables.h"
#include "core/row_search.h"
#include "core/scenarios.h"
#include "cuda/device_buffer.h"
#include "cuda/observables.h"
#include "cuda_test_helpers.h"

namespace murmur::test {
namespace {

using core::Obs;

bool isCount(Obs o) {
  switch (o) {
    case Obs::NeighboursCohesion: case Obs::NeighboursSeparation: case Obs::NeighboursAlignment: case Obs::Flocks:
    case Obs::LargestFlockShare: case Obs::Flocks1: case Obs::Flocks2to9: case Obs::Flocks10to99:
    case Obs::Flocks100to999: case Obs::Flocks1000Plus:
      return true;
    default:
      return false;
  }
}

double toleranceOf(Obs o) {
  switch (o) {
    case Obs::Potential: case Obs::TotalEnergy: case Obs::VirialRatio: case Obs::Lagrange10: case Obs::Lagrange50:
    case Obs::Lagrange90:
      return 1e-5;
    default:
      return 1e-9;
  }
}

void expectAgree(const core::Observables& gpu, const core::Observables& cpu, core::ForceMode f, bool flocks,
                 const std::string& what) {
  for (Obs o : core::observedColumns(f, flocks)) {
    if (core::observableDesc(o).derived) continue;
    const char* name = core::observableDesc(o).column;
    if (std::isnan(cpu[o])) {
      EXPECT_TRUE(std::isnan(gpu[o])) << what << " " << name;
    } else if (isCount(o)) {
      EXPECT_EQ(gpu[o], cpu[o]) << what << " " << name;
    } else {
      EXPECT_NEAR(gpu[o], cpu[o], toleranceOf(o) * std::max(1.0, std::fabs(cpu[o]))) << what << " " << name;
    }
  }
}

core::Bodies uniformBoids(size_t n, float h, uint64_t seed) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    b.pos[i] = core::Vec4{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), 1};
    b.vel[i] = core::Vec4{float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), 0};
    b.id[i] = uint32_t(i);
  }
  return b;
}

// The dense world of n boids at k neighbours each under p, whose half-size it sets.
core::Scenario denseWorld(core::SimParams& p, size_t n, double k) {
  core::ScenarioSpec spec;
  spec.name = "dense";
  spec.n = n;
  spec.denseNeighbours = k;
  core::Scenario sc = core::makeScenario(spec, p);
  p.halfSize = sc.halfSize;
  return sc;
}

class CudaObservables : public CudaTest {};

TEST_F(CudaObservables, BoidsAgreeWithTheCpuOnRandomStates) {
  for (size_t n : {size_t(1), size_t(2), size_t(33), size_t(1000), size_t(20000), size_t((1 << 17) + 3)}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Boids;
    // About 6 neighbours per boid: a giant flock and many small ones.
    p.halfSize = std::max(10.0f, float(std::cbrt(double(n) * 523.6 / 6.0) / 2));
    const core::Bodies b = uniformBoids(n, p.halfSize, n);
    core::ObserveRequest r;
    r.flocks = true;
    r.millingMinSize = 5;
    const core::Observables cpu = core::observeBodies(b.pos, b.vel, p, r);
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(b);
    expectAgree(gpu->observe(r), cpu, p.force, true, "n=" + std::to_string(n));
  }
}

TEST_F(CudaObservables, FlockedStatesAgreeOnEveryPipeline) {
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Boids;
  const core::Scenario sc = denseWorld(p, 30000, 4);
  core::ObserveRequest r;
  r.flocks = true;
  for (core::Pipeline pipe : core::pipelinesFor(core::ForceMode::Boids)) {
    p.pipeline = pipe;
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(sc.bodies);
    gpu->step(200);  // flocks form; the state is in the pipeline's own order
    const core::Bodies state = gpu->readBodies();
    expectAgree(gpu->observe(r), core::observeBodies(state.pos, state.vel, p, r), p.force, true,
                core::toString(pipe));
  }
}

// The rows pipeline samples the scalar observables in the force pass of its next step
// (CudaPipeline::sampleStep; each block searches further for its boids with no candidate inside
// the search radius, and the last block hands the sums over and zeroes them): equal to the CPU
// reference on each of its three loops, at several block sizes, in worlds from sparse (most boids
// take the further search) to crowded, with one boid far from all others (its nearest distance
// takes several growths of the radius); a second sample of the same state equals the first.
TEST_F(CudaObservables, RowsStepSampleAgreesWithTheCpuOnEveryLoop) {
  std::set<core::RowLoop> loops;
  const size_t n = 20000;
  for (float half : {120.0f, 40.0f, 22.0f, 16.0f, 12.0f}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Boids;
    p.pipeline = core::Pipeline::Rows;
    p.halfSize = half;
    core::Bodies b = uniformBoids(n, half, uint64_t(half));
    b.pos[7] = core::Vec4{-half + 0.01f, -half + 0.01f, -half + 0.01f, 1};  // alone in a corner
    for (size_t i = 8; i < n; ++i)  // keep the corner clear within a fifth of the world
      if (b.pos[i].x < -0.6f * half && b.pos[i].y < -0.6f * half && b.pos[i].z < -0.6f * half) b.pos[i].x = 0;
    loops.insert(core::rowLoop(p, n));
    const core::Observables cpu = core::observeBodies(b.pos, b.vel, p, core::ObserveRequest{});
    for (int block : {32, 128, 256}) {
      p.blockSize = block;
      auto gpu = cuda::createCudaEngine(p);
      gpu->reset(b);
      std::ostringstream what;
      what << "half " << half << " block " << block << " loop " << int(core::rowLoop(p, n));
      expectAgree(gpu->observe(core::ObserveRequest{}), cpu, p.force, false, what.str());
      expectAgree(gpu->observe(core::ObserveRequest{}), cpu, p.force, false, what.str() + ", again");
    }
  }
  EXPECT_EQ(loops.size(), 3u) << "the worlds should reach the short, flat and batched loops";
}

// A boid that the last sample listed (no other boid within its search radius) starts its next
// search from the distance that sample found for it. That is a hint only: after a reset to a
// world where the boid's nearest other boid is much nearer (the hint far too wide) or much farther
// (far too narrow), each sample still equals the CPU's.
TEST_F(CudaObservables, RowsSampleIsExactWhateverTheLastSampleLeft) {
  const size_t n = 20000;
  const float half = 40.0f;
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Boids;
  p.pipeline = core::Pipeline::Rows;
  p.halfSize = half;
  // Boid 7 alone in a corner, every other boid kept out of a cube `clear` of the world wide there.
  auto world = [&](uint64_t seed, float clear) {
    core::Bodies b = uniformBoids(n, half, seed);
    b.pos[7] = core::Vec4{-half + 0.01f, -half + 0.01f, -half + 0.01f, 1};
    const float edge = -half + 2.0f * half * clear;
    for (size_t i = 8; i < n; ++i)
      if (b.pos[i].x < edge && b.pos[i].y < edge && b.pos[i].z < edge) b.pos[i].x = 0;
    return b;
  };
  const core::Bodies far = world(3, 0.4f), near = world(4, 0.1f);
  const core::Observables cpuFar = core::observeBodies(far.pos, far.vel, p, core::ObserveRequest{});
  const core::Observables cpuNear = core::observeBodies(near.pos, near.vel, p, core::ObserveRequest{});
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(far);
  expectAgree(gpu->observe(core::ObserveRequest{}), cpuFar, p.force, false, "far, first sample");
  gpu->reset(near);
  expectAgree(gpu->observe(core::ObserveRequest{}), cpuNear, p.force, false, "near, after far");
  gpu->reset(far);
  expectAgree(gpu->observe(core::ObserveRequest{}), cpuFar, p.force, false, "far, after near");
  expectAgree(gpu->observe(core::ObserveRequest{}), cpuFar, p.force, false, "far, again");
}

// A sampled rows step leaves the engine where a plain step leaves it: an engine that samples
// before many of its steps (twice in a row at times, reading the state while a pass waits, new
// parameters after a sample) holds bitwise the state of one that never samples, and each sample
// equals the CPU reference of the state the engine holds at that moment; in the cube and in the
// plane (--dims 2).
void expectSampledStepsEqualPlainSteps(int dims) {
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Boids;
  p.pipeline = core::Pipeline::Rows;
  p.dims = dims;
  const core::Scenario sc = denseWorld(p, 20000, 4);
  const std::string world = dims == 2 ? "plane, " : "cube, ";
  auto sampled = cuda::createCudaEngine(p);
  auto plain = cuda::createCudaEngine(p);
  sampled->reset(sc.bodies);
  plain->reset(sc.bodies);
  for (int k = 0; k < 120; ++k) {
    if (k % 3 == 0) {
      const core::Observables o = sampled->observe(core::ObserveRequest{});
      if (k % 30 == 0) {
        const core::Bodies state = sampled->readBodies();
        expectAgree(o, core::observeBodies(state.pos, state.vel, p, core::ObserveRequest{}), p.force, false,
                    world + "step " + std::to_string(k));
        expectAgree(sampled->observe(core::ObserveRequest{}), o, p.force, false,
                    world + "again at " + std::to_string(k));
      }
    }
    if (k == 63) {  // the pass ran with the old parameters: the new ones must win
      core::SimParams q = p;
      q.boids.maxSpeed *= 0.5f;
      sampled->setParams(q);
      plain->setParams(q);
    }
    sampled->step(1);
    plain->step(1);
  }
  const core::Bodies a = sampled->readBodies(), b = plain->readBodies();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(std::memcmp(&a.pos[i], &b.pos[i], sizeof(core::Vec4)), 0) << world << "body " << i;
    ASSERT_EQ(std::memcmp(&a.vel[i], &b.vel[i], sizeof(core::Vec4)), 0) << world << "body " << i;
  }
}

TEST_F(CudaObservables, RowsStepsAfterASampleEqualPlainSteps) {
  expectSampledStepsEqualPlainSteps(3);
  expectSampledStepsEqualPlainSteps(2);
}

// The periodic boundary (docs/observables.md#the-periodic-boundary). The CUDA engine refuses it
// until its kernels wrap, so these tests hand a state to the engine's observer (DeviceObserver,
// the path every pipeline but the rows one samples through) in device arrays of their own.

// A state copied to the device and observed there by `observer`, `block` threads per block.
core::Observables observeOnDevice(cuda::DeviceObserver& observer, const core::Bodies& b, const core::SimParams& p,
                                  const core::ObserveRequest& r, int block = 256) {
  cuda::DeviceBuffer<core::Vec4> pos, vel;
  pos.allocate(b.size());
  vel.allocate(b.size());
  const size_t bytes = b.size() * sizeof(core::Vec4);
  EXPECT_EQ(cudaMemcpy(pos.get(), b.pos.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(vel.get(), b.vel.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  core::DeviceAccess::Bodies d;
  d.pos = pos.get(), d.vel = vel.get(), d.id = nullptr, d.species = nullptr;
  d.n = b.size();
  d.blockSize = block;
  const core::Observables out = observer.observe(d, p, r, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out;
}

core::Observables observeOnDevice(const core::Bodies& b, const core::SimParams& p, const core::ObserveRequest& r,
                                  int block = 256) {
  cuda::DeviceObserver observer;
  return observeOnDevice(observer, b, p, r, block);
}

core::SimParams periodicBoids(float h, int dims) {
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Boids;
  p.boundary = core::Boundary::Periodic;
  p.dims = dims;
  p.halfSize = h;
  return p;
}

core::Bodies inThePlane(core::Bodies b) {
  for (size_t i = 0; i < b.size(); ++i) b.pos[i].z = 0, b.vel[i].z = 0;
  return b;
}

// Random states of about 6 neighbours a boid (a flock wrapped around the torus and many small
// ones, plenty of them cut by a face) in the cube and the plane, at two block sizes: counts,
// flocks and bins equal; nearest distances, means and milling within 1e-9.
TEST_F(CudaObservables, PeriodicBoidsAgreeWithTheCpuOnRandomStates) {
  for (int dims : {3, 2})
    for (size_t n : {size_t(1), size_t(2), size_t(33), size_t(1000), size_t(20000), size_t((1 << 17) + 3)}) {
      if (dims == 2 && n > 20000) continue;
      const double volume = dims == 3 ? 523.6 : 78.54;  // of a sphere (a disc) of the cohesion radius
      const float h = std::max(12.0f, float(std::pow(double(n) * volume / 6.0, 1.0 / dims) / 2));
      const core::SimParams p = periodicBoids(h, dims);
      core::Bodies b = uniformBoids(n, h, n + dims);
      if (dims == 2) b = inThePlane(b);
      core::ObserveRequest r;
      r.flocks = true;
      r.millingMinSize = 5;
      const core::Observables cpu = core::observeBodies(b.pos, b.vel, p, r);
      for (int block : {256, 64}) {
        std::ostringstream what;
        what << "dims " << dims << " n " << n << " block " << block;
        expectAgree(observeOnDevice(b, p, r, block), cpu, p.force, true, what.str());
      }
    }
}

// Hand-built flocks across the faces, as tests/core/test_observables.cpp builds them: two boids 1
// apart through a face or a corner (one flock, nearest distance 1), two boids far apart through a
// face, and a milling ring and a spinning lopsided blob centred on a corner, each measured as in
// the middle of the world.
TEST_F(CudaObservables, PeriodicFlocksAcrossTheFacesAgreeWithTheCpu) {
  const float h = 50;
  core::ObserveRequest r;
  r.flocks = true;
  r.millingMinSize = 2;
  auto pair = [](core::Vec3 a, core::Vec3 c) {
    core::Bodies b;
    b.resize(2);
    b.pos = {core::make4(a, 1), core::make4(c, 1)};
    b.vel = {core::Vec4{1, 0, 0, 0}, core::Vec4{0, 1, 0, 0}};
    b.id = {0, 1};
    return b;
  };
  struct Pair {
    int dims;
    core::Vec3 a, b;
    double nearest;
  };
  const Pair pairs[] = {
      {3, {49.5f, 3, -7}, {-49.5f, 3, -7}, 1.0},
      {3, {2, -49.5f, 11}, {2, 49.5f, 11}, 1.0},
      {3, {-20, 5, 49.5f}, {-20, 5, -49.5f}, 1.0},
      {3, {49.5f, 49.5f, 49.5f}, {-49.5f, -49.5f, -49.5f}, std::sqrt(3.0)},
      {3, {-30, 1, 2}, {45, 1, 2}, 25.0},
      {2, {49.5f, 8, 0}, {-49.5f, 8, 0}, 1.0},
      {2, {-13, -49.5f, 0}, {-13, 49.5f, 0}, 1.0},
  };
  for (const Pair& c : pairs) {
    const core::SimParams p = periodicBoids(h, c.dims);
    const core::Bodies b = pair(c.a, c.b);
    std::ostringstream what;
    what << "pair dims " << c.dims << " a.x " << c.a.x;
    const core::Observables gpu = observeOnDevice(b, p, r);
    expectAgree(gpu, core::observeBodies(b.pos, b.vel, p, r), p.force, true, what.str());
    EXPECT_DOUBLE_EQ(gpu[Obs::NearestDistance], c.nearest) << what.str();
    EXPECT_EQ(gpu[Obs::Flocks], c.nearest < 5 ? 1 : 2) << what.str();
  }

  r.millingMinSize = 10;
  for (int dims : {3, 2}) {
    const core::SimParams p = periodicBoids(h, dims);
    core::Bodies ring, blob;
    for (int k = 0; k < 40; ++k) {
      const double a = 2 * 3.14159265358979 * k / 40;
      ring.resize(size_t(k) + 1);
      ring.pos[size_t(k)] = core::Vec4{float(4 * std::cos(a)), float(4 * std::sin(a)), 0, 1};
      ring.vel[size_t(k)] = core::Vec4{float(-std::sin(a)), float(std::cos(a)), 0, 0};
      ring.id[size_t(k)] = uint32_t(k);
    }
    core::Rng rng(11 + dims);
    blob.resize(80);
    for (size_t k = 0; k < 80; ++k) {
      const float x = float(k < 60 ? rng.uniform(-3, 3) : rng.uniform(3, 7)), y = float(rng.uniform(-2, 2));
      const float z = dims == 2 ? 0.0f : float(rng.uniform(-1, 1));
      blob.pos[k] = core::Vec4{x, y, z, 1};
      blob.vel[k] = core::Vec4{-(y + 1), x - 1, 0, 0};
      blob.id[k] = uint32_t(k);
    }
    for (const core::Bodies* flock : {&ring, &blob}) {
      const core::Observables middle = core::observeBodies(flock->pos, flock->vel, p, r);
      for (const core::Vec3 t : {core::Vec3{0, 0, 0}, core::Vec3{h, h, dims == 2 ? 0.0f : h}, core::Vec3{h - 2, 0, 0}}) {
        core::Bodies there = *flock;
        const auto wrap = [h](float x) { return x >= h ? x - 2 * h : (x < -h ? x + 2 * h : x); };
        for (core::Vec4& q : there.pos) q = core::Vec4{wrap(q.x + t.x), wrap(q.y + t.y), wrap(q.z + t.z), 1};
        std::ostringstream what;
        what << (flock == &ring ? "ring" : "blob") << " dims " << dims << " moved by " << t.x << "," << t.y << "," << t.z;
        const core::Observables gpu = observeOnDevice(there, p, r);
        expectAgree(gpu, core::observeBodies(there.pos, there.vel, p, r), p.force, true, what.str());
        EXPECT_EQ(gpu[Obs::Flocks], 1) << what.str();
        EXPECT_NEAR(gpu[Obs::Milling], middle[Obs::Milling], 1e-5) << what.str();
      }
    }
  }
}

// A state the CPU engine flocked under the periodic boundary (flocks drifting through the faces):
// the observer agrees with the CPU on every boids column, in the cube and the plane.
TEST_F(CudaObservables, PeriodicFlockedStateAgreesWithTheCpu) {
  for (int dims : {3, 2}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Boids;
    p.dims = dims;
    const core::Scenario sc = denseWorld(p, 10000, 4);
    p.boundary = core::Boundary::Periodic;
    core::CpuEngine cpu(p);
    cpu.reset(sc.bodies);
    cpu.step(150);
    const core::Bodies state = cpu.readBodies();
    core::ObserveRequest r;
    r.flocks = true;
    expectAgree(observeOnDevice(state, p, r), cpu.observe(r), p.force, true, "dims " + std::to_string(dims));
  }
}

// One observer keeps its buffers between samples: the flocks' sums take more room per boid under
// the periodic boundary than under wrap. Samples that switch boundary, flock count and size each
// agree with the CPU.
TEST_F(CudaObservables, ObserverSwitchesBoundaryBetweenSamples) {
  cuda::DeviceObserver observer;
  core::ObserveRequest flocks;
  flocks.flocks = true;
  flocks.millingMinSize = 5;
  int k = 0;
  for (size_t n : {size_t(5000), size_t(5000), size_t(20000), size_t(3000)})
    for (core::Boundary boundary : {core::Boundary::Wrap, core::Boundary::Periodic}) {
      core::SimParams p = periodicBoids(std::max(12.0f, float(std::cbrt(double(n) * 523.6 / 6.0) / 2)), 3);
      p.boundary = boundary;
      const core::Bodies b = uniformBoids(n, p.halfSize, 40 + n);
      const core::ObserveRequest r = ++k % 3 == 0 ? core::ObserveRequest{} : flocks;
      std::ostringstream what;
      what << "sample " << k << " n " << n << " " << core::toString(boundary) << (r.flocks ? " with flocks" : "");
      expectAgree(observeOnDevice(observer, b, p, r), core::observeBodies(b.pos, b.vel, p, r), p.force, r.flocks,
                  what.str());
    }
}

// The group columns (core::groupObservablesApply; docs/observables.md): under walls, the states
// the CPU tests build by hand agree with the CPU reference, through the engine on every boids
// pipeline and through the observer at two block sizes, with and without the flock count; where
// the world wraps their cells stay empty on the GPU too (the rows pipeline's sampled pass under
// wrap, the observer under periodic).

core::SimParams wallBoids(float h, int dims) {
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Boids;
  p.boundary = core::Boundary::Reflect;
  p.dims = dims;
  p.halfSize = h;
  return p;
}

void addBoid(core::Bodies& b, core::Vec3 at, core::Vec3 v) {
  const size_t i = b.size();
  b.resize(i + 1);
  b.pos[i] = core::make4(at, 1);
  b.vel[i] = core::make4(v, 0);
  b.id[i] = uint32_t(i);
}

// n boids evenly on a circle of radius R about c in the plane of e1 and e2, moving along it at
// speed s: a rigid mill (group_rotation 1).
core::Bodies millBoids(int n, core::Vec3 c, double R, double s, core::Vec3 e1, core::Vec3 e2) {
  core::Bodies b;
  for (int k = 0; k < n; ++k) {
    const double a = 2 * 3.14159265358979323846 * k / n, ca = std::cos(a), sa = std::sin(a);
    addBoid(b, core::Vec3{float(c.x + R * (ca * e1.x + sa * e2.x)), float(c.y + R * (ca * e1.y + sa * e2.y)),
                          float(c.z + R * (ca * e1.z + sa * e2.z))},
            core::Vec3{float(s * (ca * e2.x - sa * e1.x)), float(s * (ca * e2.y - sa * e1.y)),
                       float(s * (ca * e2.z - sa * e1.z))});
  }
  return b;
}

// A lattice symmetric about c (a boid at c itself), every boid with velocity v: group_rotation 0.
core::Bodies latticeBoids(int dims, core::Vec3 c, core::Vec3 v) {
  core::Bodies b;
  const int zr = dims == 2 ? 0 : 2;
  for (int i = -2; i <= 2; ++i)
    for (int j = -2; j <= 2; ++j)
      for (int k = -zr; k <= zr; ++k)
        addBoid(b, core::Vec3{c.x + 1.5f * float(i), c.y + 1.25f * float(j), c.z + 1.75f * float(k)}, v);
  return b;
}

// Random boids swirling about a point off the centre, one of them at rest.
core::Bodies swirlingBoids(size_t n, const core::SimParams& p, uint64_t seed) {
  core::Bodies b = uniformBoids(n, p.halfSize, seed);
  if (p.dims == 2) b = inThePlane(b);
  const double swirl = 0.6 / p.halfSize;
  for (size_t i = 0; i < n; ++i) {
    b.vel[i].x += float(-swirl * (b.pos[i].y - 4.0));
    b.vel[i].y += float(swirl * (b.pos[i].x + 3.0));
  }
  b.vel[n / 2] = core::Vec4{0, 0, 0, 0};
  return b;
}

TEST_F(CudaObservables, GroupColumnsAgreeWithTheCpuUnderWalls) {
  struct State {
    std::string name;
    core::SimParams p;
    core::Bodies b;
    double rotation;  // the known group_rotation, or -1 for none
  };
  std::vector<State> states;
  states.push_back({"mill xy", wallBoids(50, 3), millBoids(64, {3, -2, 4}, 10, 1.5, {1, 0, 0}, {0, 1, 0}), 1.0});
  states.push_back({"mill xz", wallBoids(50, 3), millBoids(64, {-5, 1, 2}, 10, 1.5, {0, 0, 1}, {1, 0, 0}), 1.0});
  states.push_back({"mill plane", wallBoids(50, 2), millBoids(64, {3, -2, 0}, 10, 1.5, {1, 0, 0}, {0, 1, 0}), 1.0});
  states.push_back({"lattice", wallBoids(50, 3), latticeBoids(3, {7, -3, 2}, {0.3f, -0.4f, 1.2f}), 0.0});
  states.push_back({"lattice plane", wallBoids(50, 2), latticeBoids(2, {7, -3, 0}, {0.3f, -0.4f, 0}), 0.0});
  for (int dims : {3, 2})
    for (size_t n : {size_t(1), size_t(1000), size_t(20000)}) {
      const core::SimParams p = wallBoids(dims == 3 ? std::max(10.0f, float(std::cbrt(double(n) * 523.6 / 6.0) / 2))
                                                    : std::max(12.0f, float(std::sqrt(double(n) * 78.54 / 6.0) / 2)),
                                          dims);
      states.push_back({"swirl dims " + std::to_string(dims) + " n " + std::to_string(n), p,
                        swirlingBoids(n, p, 70 + n + size_t(dims)), -1.0});
    }
  for (const State& st : states)
    for (bool flocks : {false, true}) {
      core::ObserveRequest r;
      r.flocks = flocks;
      r.millingMinSize = 5;
      const core::Observables cpu = core::observeBodies(st.b.pos, st.b.vel, st.p, r);
      ASSERT_TRUE(cpu.has(Obs::GroupRotation)) << st.name;
      const std::string what = st.name + (flocks ? ", flocks" : "");
      for (int block : {256, 64}) {
        const core::Observables gpu = observeOnDevice(st.b, st.p, r, block);
        expectAgree(gpu, cpu, st.p.force, flocks, what + ", observer block " + std::to_string(block));
        if (st.rotation >= 0) {
          EXPECT_NEAR(gpu[Obs::GroupRotation], st.rotation, 1e-9) << what;
        }
      }
      for (core::Pipeline pipe : boidsPipelines()) {
        core::SimParams p = st.p;
        p.pipeline = pipe;
        auto gpu = cuda::createCudaEngine(p);
        gpu->reset(st.b);
        expectAgree(gpu->observe(r), cpu, p.force, flocks, what + ", " + core::toString(pipe));
      }
    }
}

TEST_F(CudaObservables, GroupColumnsAreEmptyWhereTheWorldWraps) {
  const core::Bodies b = millBoids(64, {3, -2, 4}, 10, 1.5, {1, 0, 0}, {0, 1, 0});
  for (core::Boundary boundary : {core::Boundary::Wrap, core::Boundary::Periodic})
    for (bool flocks : {false, true}) {
      core::SimParams p = wallBoids(50, 3);
      p.boundary = boundary;
      p.pipeline = core::Pipeline::Rows;
      core::ObserveRequest r;
      r.flocks = flocks;
      auto gpu = cuda::createCudaEngine(p);
      gpu->reset(b);
      const std::string what = std::string(core::toString(boundary)) + (flocks ? ", flocks" : "");
      for (const core::Observables& o : {gpu->observe(r), observeOnDevice(b, p, r)}) {
        EXPECT_TRUE(o.has(Obs::Polarization)) << what;
        for (Obs c : {Obs::GroupPolarization, Obs::GroupRotation, Obs::GroupAngularMomentum})
          EXPECT_FALSE(o.has(c)) << what << " " << core::observableDesc(c).column;
      }
    }
}

TEST_F(CudaObservables, GravityAgreesWithTheCpu) {
  for (const char* scenario : {"plummer", "galaxies"}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Gravity;
    core::ScenarioSpec spec;
    spec.name = scenario;
    spec.n = 20000;
    const core::Bodies b = core::makeScenario(spec, p).bodies;
    const core::Observables cpu = core::observeBodies(b.pos, b.vel, p, core::ObserveRequest{});
    auto gpu = cuda::createCudaEngine(p);
    gpu->reset(b);
    expectAgree(gpu->observe(core::ObserveRequest{}), cpu, p.force, false, scenario);
    core::ObserveRequest small;
    small.potentialMaxN = 1000;
    const core::Observables s = gpu->observe(small);
    EXPECT_TRUE(std::isnan(s[Obs::Potential]));
    EXPECT_NEAR(s[Obs::Kinetic], cpu[Obs::Kinetic], 1e-9 * cpu[Obs::Kinetic]);
  }
}

TEST_F(CudaObservables, UniformSphereHasTheKnownPotential) {
  const size_t n = 100000;
  const double R = 2.0, M = 1.0;
  core::Rng rng(3);
  core::Bodies b;
  while (b.size() < n) {
    const double x = rng.uniform(-1, 1), y = rng.uniform(-1, 1), z = rng.uniform(-1, 1);
    if (x * x + y * y + z * z >= 1) continue;
    const size_t i = b.size();
    b.resize(i + 1);
    b.pos[i] = core::Vec4{float(R * x), float(R * y), float(R * z), float(M / n)};
    b.vel[i] = core::Vec4{0, 0, 0, 0};
    b.id[i] = uint32_t(i);
  }
  core::SimParams p = core::defaultParams();
  p.force = core::ForceMode::Gravity;
  p.gravity.G = 1;
  p.gravity.softening = 1e-5f;
  auto gpu = cuda::createCudaEngine(p);
  gpu->reset(b);
  const double want = -3.0 * M * M / (5 * R);
  EXPECT_NEAR(gpu->observe(core::ObserveRequest{})[Obs::Potential], want, 0.003 * std::fabs(want));
}

}  // namespace
}  // namespace murmur::test
