// One simulation over the ranks this test was started with, against one rank: the CPU engine (host
// store over MPI) and, where there is a GPU and NCCL, the CUDA engine (device store over NCCL).
// Boids must match the one-rank run of the same pipeline (coherent, rows) per id to the bit after
// many steps (same neighbour sets, same summation order), through migration, the wrap boundary
// and moving slabs, and under the periodic boundary, whose halos wrap around z. Gravity (all
// pairs) must match the one-rank naive pipeline to the bit.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/pipeline_table.h"
#include "core/rng.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "core/scenarios.h"
#include "core/splat.h"
#include "dist/dist_engine.h"
#include "dist/dist_factory.h"
#include "dist/launch.h"
#if defined(MURMUR_TEST_CUDA)
#include "cuda/cuda_engine.h"
#endif

namespace murmur::dist {
namespace {

// The pipeline several ranks run for force f without --pipeline (the table's,
// core/pipeline_table.h): rows boids, all-pairs (naive) gravity. The one-rank reference runs the
// same pipeline.
core::Pipeline onRanks(core::ForceMode f) { return core::defaultRankPipeline(f); }
constexpr core::ForceMode kBoids = core::ForceMode::Boids, kGravity = core::ForceMode::Gravity;

struct Case {
  std::string scenario;
  size_t n;
  int steps;
  core::ForceMode force;
  core::Pipeline pipeline;
  float dt = 0;        // boids dt, 0 = the default
  float halfSize = 0;  // uniform, drifting-clump and face-clump: the world's half-size, 0 = the default
  int cellWidth = 0;   // --cell-width, 0 = the default
  core::Boundary boundary = core::Boundary::Wrap;
  int dims = 3;
};

// Runs `each` once per boids pipeline several ranks run (coherent and rows), every rank alike.
void forEachBoidsPipeline(const std::function<void(core::Pipeline)>& each) {
  for (core::Pipeline pipe : core::rankPipelines(kBoids)) {
    SCOPED_TRACE(std::string("pipeline ") + core::toString(pipe));
    each(pipe);
  }
}

// Three quarters of the bodies in a clump a tenth of the world thick centred on z = centre (the
// part past the top face wrapped to the bottom) drifting along +z (the slab axis), plus a thin
// uniform background. Random numbers from `seed`, drawn in the same order whatever the centre.
core::Bodies clumpDriftingAlongZ(size_t n, const core::SimParams& p, uint64_t seed, double centre) {
  core::Rng rng(seed);
  core::Bodies b;
  b.resize(n);
  const double h = p.halfSize;
  for (size_t i = 0; i < n; ++i) {
    const bool clump = i % 4 != 0;
    double z = clump ? centre * h + rng.uniform(-0.1 * h, 0.1 * h) : rng.uniform(-h, h);
    if (z >= h) z -= 2.0 * h;
    b.pos[i] = core::Vec4{float(rng.uniform(-h, h)), float(rng.uniform(-h, h)), float(z), 1.0f};
    b.vel[i] = clump ? core::Vec4{0.0f, 0.0f, 0.9f, 0.0f}
                     : core::Vec4{0.0f, float(rng.uniform(-0.5, 0.5)), float(rng.uniform(-0.5, 0.5)), 0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// A clump a few planes thick in the middle of the world: the slabs balanced at reset fall out of
// balance within a few dozen steps and have to move.
core::Bodies driftingClump(size_t n, const core::SimParams& p) { return clumpDriftingAlongZ(n, p, 11, 0.0); }

// A clump straddling the top z face: under the periodic boundary its bodies see each other across
// the face while the first and the last slabs hold them, and the slabs have to follow it around.
core::Bodies faceClump(size_t n, const core::SimParams& p) { return clumpDriftingAlongZ(n, p, 17, 0.95); }

// A uniform world with a third of its bodies packed into eight cubes a tenth of a rule radius
// wide, spread along the world's diagonal: hundreds of bodies share a cell of the rows grid, and
// whatever the slab axis, every slab of up to four ranks holds at least one cube (the slabs cut
// equal shares of the bodies, two cubes' worth and more each).
core::Bodies crowdedBlob(size_t n, const core::SimParams& p) {
  core::Rng rng(13);
  core::Bodies b;
  b.resize(n);
  const double h = p.halfSize, w = 0.05 * p.boids.cohesionRadius;
  for (size_t i = 0; i < n; ++i) {
    const bool packed = i % 3 == 0;
    const double s = packed ? w : h, c = packed ? h * (-0.875 + 0.25 * double((i / 3) % 8)) : 0.0;
    b.pos[i] = core::Vec4{float(c + rng.uniform(-s, s)), float(c + rng.uniform(-s, s)), float(c + rng.uniform(-s, s)),
                          1.0f};
    b.vel[i] = core::Vec4{float(rng.uniform(-0.5, 0.5)), float(rng.uniform(-0.5, 0.5)), float(rng.uniform(-0.5, 0.5)),
                          0.0f};
    b.id[i] = static_cast<uint32_t>(i);
  }
  return b;
}

// Every body a species of its own id's (most not 0): it must travel with the body through every
// migration and halo, and the comparisons check it.
core::Species speciesOf(uint32_t id) { return static_cast<core::Species>((id * 37u + 11u) % core::kSpeciesCount); }
void tagSpecies(core::Bodies& b) {
  b.species.resize(b.size());
  for (size_t i = 0; i < b.size(); ++i) b.species[i] = speciesOf(b.id[i]);
}

core::SimParams paramsForUntagged(const Case& c, core::Bodies& bodies);
core::SimParams paramsFor(const Case& c, core::Bodies& bodies) {
  core::SimParams p = paramsForUntagged(c, bodies);
  tagSpecies(bodies);
  return p;
}

core::SimParams paramsForUntagged(const Case& c, core::Bodies& bodies) {
  core::SimParams p = core::defaultParams();
  if (c.halfSize > 0) p.halfSize = c.halfSize;
  if (c.cellWidth > 0) p.cellWidthFactor = c.cellWidth;
  p.boundary = c.boundary;
  p.dims = c.dims;
  if (c.scenario == "crowded-blob") {
    bodies = crowdedBlob(c.n, p);
    p.pipeline = c.pipeline;
    return p;
  }
  if (c.scenario == "drifting-clump") {
    bodies = driftingClump(c.n, p);
    p.pipeline = c.pipeline;
    return p;
  }
  if (c.scenario == "face-clump") {
    bodies = faceClump(c.n, p);
    p.pipeline = c.pipeline;
    return p;
  }
  core::ScenarioSpec spec;
  spec.name = c.scenario;
  spec.n = c.n;
  spec.seed = 7;
  p.force = c.force;
  p.pipeline = c.pipeline;
  core::Scenario scenario = core::makeScenario(spec, p);
  bodies = std::move(scenario.bodies);
  p.halfSize = scenario.halfSize;
  if (c.dt > 0) p.boids.dt = c.dt;
  return p;
}

// Bitwise per-id comparison (memcmp of the float words: -0 vs +0 or NaNs would show too).
void expectIdentical(const core::Bodies& ref, const core::Bodies& got, const std::string& what) {
  ASSERT_EQ(ref.size(), got.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < ref.size() && bad < 5; ++i) {
    ASSERT_EQ(got.id[i], i) << what;
    ASSERT_EQ(got.species.size(), got.size()) << what;
    if (got.species[i] != ref.species[i]) {
      ++bad;
      ADD_FAILURE() << what << ": body " << i << " species " << int(got.species[i]) << ", one rank's "
                    << int(ref.species[i]);
    }
    if (std::memcmp(&ref.pos[i], &got.pos[i], sizeof(core::Vec4)) != 0 ||
        std::memcmp(&ref.vel[i].x, &got.vel[i].x, 3 * sizeof(float)) != 0) {
      ++bad;
      ADD_FAILURE() << what << ": body " << i << " pos (" << ref.pos[i].x << ", " << ref.pos[i].y << ", "
                    << ref.pos[i].z << ") vs (" << got.pos[i].x << ", " << got.pos[i].y << ", " << got.pos[i].z << ")";
    }
  }
}

// What a run over the ranks did, as the tests check it.
struct RunInfo {
  int rebalances = 0;
  int halo = 0;        // planes on either side of a slab
  int wrapHalo = 0;    // planes across the z faces (the periodic boundary)
  int thinnest = 0;    // planes of the thinnest slab of the run
  int mostNeeding = 0;  // the most ranks that needed one plane in a step of the run
  bool counted = false;      // this rank's last step sorted with the counting sort
  size_t selectionRead = 0;  // owned bodies this rank's last selection read
  int slab = 0;              // planes of this rank's slab after the run
};

// Runs the case over every rank and, on rank 0, over one rank with `single`; compares per id.
template <typename MakeSingle>
void runCase(core::EngineKind kind, const Case& c, MakeSingle makeSingle, int* rebalances = nullptr,
             RunInfo* info = nullptr) {
  core::Bodies bodies;
  const core::SimParams p = paramsFor(c, bodies);
  auto engine = createDistEngine(kind, p);
  auto* d = dynamic_cast<DistEngine*>(engine.get());
  ASSERT_NE(d, nullptr);
  engine->reset(bodies);
  if (info) {
    // Step by step, to see the thinnest slab of the run.
    info->thinnest = d->layout().numPlanes;
    for (int s = 0; s < c.steps; ++s) {
      engine->step(1);
      const SlabLayout& l = d->layout();
      for (int r = 0; r < l.numRanks; ++r) info->thinnest = std::min(info->thinnest, l.start[r + 1] - l.start[r]);
      int need[kMaxRanks];
      for (int q = 0; q < l.numPlanes; ++q) info->mostNeeding = std::max(info->mostNeeding, ranksNeeding(l, q, need));
    }
  } else {
    engine->step(c.steps);
  }
  const core::Bodies got = engine->readBodies();
  // What a client (the summary) sees through the capability, without the cast.
  const core::RankAccess* ranksSeen = engine->rankAccess();
  ASSERT_NE(ranksSeen, nullptr);
  EXPECT_EQ(ranksSeen->rank(), d->rank());
  EXPECT_EQ(ranksSeen->numRanks(), d->ranks());
  EXPECT_EQ(ranksSeen->summary(), d->summary());
  EXPECT_EQ(ranksSeen->summary().rfind("ranks=" + std::to_string(d->ranks()) + " transport=", 0), 0u)
      << ranksSeen->summary();
  if (rebalances) *rebalances = d->commStats().rebalances;
  if (info) {
    info->rebalances = d->commStats().rebalances;
    info->halo = d->layout().halo;
    info->wrapHalo = d->layout().wrapHalo;
    info->counted = d->lastSortCounted();
    info->selectionRead = d->lastSelectionRead();
    info->slab = d->layout().start[d->rank() + 1] - d->layout().start[d->rank()];
  }
  if (d->rank() != 0) {
    EXPECT_TRUE(got.pos.empty());  // rank 0 speaks for the job
    return;
  }
  std::unique_ptr<core::Engine> single = makeSingle(p);
  single->reset(bodies);
  single->step(c.steps);
  expectIdentical(single->readBodies(), got,
                  c.scenario + " " + core::toString(c.force) + " over " + std::to_string(d->ranks()) + " ranks");
}

// The Vicsek model over the ranks: its noise is drawn per body from (seed, id, step)
// (core/random.h), so every rank count draws the same numbers for each body, and the run equals
// one rank's to the bit, in a periodic world whose flock crosses the z faces; a rank that drew by
// slot, or from the step of another count, would part from one rank at the first step.
// `steps` steps of p from the uniform start of n bodies over the ranks, against one engine's
// (rank 0 compares; `what` names the case).
template <typename MakeSingle>
void expectUniformRunMatchesOneRank(core::EngineKind kind, const core::SimParams& p, size_t n, uint64_t seed, int steps,
                                    const std::string& what, MakeSingle makeSingle) {
  core::ScenarioSpec spec;
  spec.name = "uniform";
  spec.n = n;
  spec.seed = seed;
  core::Bodies bodies = core::makeScenario(spec, p).bodies;
  tagSpecies(bodies);
  auto engine = createDistEngine(kind, p);
  engine->reset(bodies);
  engine->step(steps);
  const core::Bodies got = engine->readBodies();
  if (engine->rankAccess()->rank() != 0) return;
  std::unique_ptr<core::Engine> single = makeSingle(p);
  single->reset(bodies);
  single->step(steps);
  expectIdentical(single->readBodies(), got,
                  what + " over " + std::to_string(engine->rankAccess()->numRanks()) + " ranks");
}

template <typename MakeSingle>
void expectVicsekMatchesOneRank(core::EngineKind kind, size_t n, MakeSingle makeSingle) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    for (core::VicsekNoise noise : {core::VicsekNoise::Angular, core::VicsekNoise::Vectorial}) {
      core::SimParams p = core::defaultParams();
      core::selectRule(p, *core::findRule("vicsek"));
      p.boundary = core::Boundary::Periodic;
      p.pipeline = pipe;
      p.vicsek.noise = 1.2f;
      p.vicsek.noiseKind = noise;
      p.vicsek.speed = 0.3f;  // a third of the radius per step: many bodies cross a slab face
      p.halfSize = 0.5f * float(std::cbrt(double(n) / 4.0));  // density 4 per unit volume
      expectUniformRunMatchesOneRank(kind, p, n, 9, 25,
                                     std::string("vicsek ") + core::toString(noise) + " on " + core::toString(pipe),
                                     makeSingle);
    }
  });
}

// Couzin's zones over the ranks, in a walled world and on a torus: the blind angle reads the body's
// own velocity and the noise is drawn per body, so the run equals one rank's to the bit; the reach
// (r_a = 7 here) is the slabs' halo.
template <typename MakeSingle>
void expectCouzinMatchesOneRank(core::EngineKind kind, size_t n, MakeSingle makeSingle) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    for (core::Boundary boundary : {core::Boundary::Reflect, core::Boundary::Periodic}) {
      core::SimParams p = core::defaultParams();
      core::selectRule(p, *core::findRule("couzin"));
      p.boundary = boundary;
      p.pipeline = pipe;
      p.couzin.zoneOrientation = 2.0f, p.couzin.zoneAttraction = 4.0f;
      p.couzin.noise = 0.2f;
      p.couzin.speed = 1.5f;  // many bodies cross a slab face
      p.couzin.turnRate = 30.0f;
      p.halfSize = 0.5f * float(std::cbrt(double(n) / 0.2));  // about 290 bodies within r_a
      expectUniformRunMatchesOneRank(kind, p, n, 11, 15,
                                     std::string("couzin ") + core::toString(boundary) + " on " + core::toString(pipe),
                                     makeSingle);
    }
  });
}

// A frame over the ranks: every rank splats its own bodies and the images meet in one per-pixel
// minimum on rank 0, which must be the image of every body splatted in one place (core/splat.h;
// the GPU splat gives the CPU's keys). The eye looks down -z from outside the world; bodies near it
// are discs, far ones single pixels.
void expectCompositeIsOneImage(core::EngineKind kind, const Case& c) {
  core::Bodies bodies;
  const core::SimParams p = paramsFor(c, bodies);
  auto engine = createDistEngine(kind, p);
  engine->reset(bodies);
  engine->step(c.steps);
  core::SplatView view;
  const int width = 320, height = 200;
  float* m = view.viewProj;
  double r2 = 0;  // the bodies' rms distance from the centre sets the eye's distance
  for (const core::Vec4& q : bodies.pos) r2 += double(q.x) * q.x + double(q.y) * q.y + double(q.z) * q.z;
  const float extent = float(std::sqrt(r2 / double(bodies.size())));
  const float eye = 2.5f * extent, aspect = float(width) / float(height);
  m[0] = 1.0f / aspect, m[5] = 1.0f, m[10] = -1.0f, m[11] = -1.0f, m[15] = eye;  // clip w = eye - z
  view.width = width, view.height = height;
  view.nearDepth = 0.1f;
  view.pixelsPerUnit = 0.5f * float(height);
  view.bodySize = 0.02f * extent;
  core::SplatView sent = view;
  if (engine->rankAccess()->rank() != 0) sent = core::SplatView{};  // only rank 0's view counts
  std::vector<uint64_t> keys;
  engine->rankAccess()->compositeSplat(sent, keys);
  const core::Bodies all = engine->readBodies();
  if (engine->rankAccess()->rank() != 0) return;
  std::vector<uint64_t> want(size_t(width) * size_t(height));
  core::clearSplat(want.data(), want.size());
  core::splatBodies(view, all.pos.data(), all.vel.data(), all.id.data(), all.size(), want.data());
  size_t lit = 0, differ = 0;
  ASSERT_EQ(keys.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    lit += want[i] != core::kSplatEmpty;
    differ += want[i] != keys[i];
  }
  EXPECT_GT(lit, 500u) << "the frame should show the bodies";
  EXPECT_EQ(differ, 0u) << "pixels differing from one image of every body, of " << lit << " lit";
}

// Each rank makes only the bodies of its run of ids and passes them to resetShare, which sends
// them to their owners: every later step equals reset with every body on every rank, per id, to
// the bit (and so one rank's run).
void expectShareResetIsReset(core::EngineKind kind, core::ForceMode force, core::Pipeline pipe, const char* name,
                             size_t n, int steps, core::Boundary boundary = core::Boundary::Wrap) {
  core::SimParams p = core::defaultParams();
  p.force = force;
  p.pipeline = pipe;
  p.boundary = boundary;
  core::ScenarioSpec spec;
  spec.name = name;
  spec.n = n;
  spec.seed = 5;
  core::Scenario whole = core::makeScenario(spec, p);
  p.halfSize = whole.halfSize;
  auto all = createDistEngine(kind, p);
  all->reset(whole.bodies);
  all->step(steps);
  const core::Bodies want = all->readBodies();
  auto shared = createDistEngine(kind, p);
  core::RankAccess& ra = *shared->rankAccess();
  size_t first = 0, last = 0;
  ra.idShare(n, &first, &last);
  EXPECT_EQ(last - first, firstIdOfRank(n, ra.numRanks(), ra.rank() + 1) - firstIdOfRank(n, ra.numRanks(), ra.rank()));
  ra.resetShare(core::makeScenarioShare(spec, p, first, last).bodies, n);
  shared->step(steps);
  const core::Bodies got = shared->readBodies();
  EXPECT_EQ(ra.summary(), all->rankAccess()->summary());  // the same slabs, halos and traffic
  if (ra.rank() == 0)
    expectIdentical(want, got, std::string(name) + " " + core::toString(force) + " " + core::toString(pipe) +
                                   " from shares over " + std::to_string(ra.numRanks()) + " ranks");
}

// What the periodic boundary does in a case, on one rank (the CPU engine, the case's pipeline and
// boundary): how many times a body crossed a z face (a step that moved it along z by more than the
// world's half-size), and how many bodies end elsewhere than under the wrap boundary.
struct FaceTraffic {
  size_t crossings = 0, differFromWrap = 0;
};
FaceTraffic faceTraffic(const Case& c) {
  core::Bodies bodies;
  const core::SimParams p = paramsFor(c, bodies);
  FaceTraffic t;
  auto periodic = core::createCpuEngine(p);
  periodic->reset(bodies);
  core::Bodies before = periodic->readBodies();
  for (int s = 0; s < c.steps; ++s) {
    periodic->step(1);
    core::Bodies after = periodic->readBodies();
    for (size_t i = 0; i < after.size(); ++i) t.crossings += std::fabs(after.pos[i].z - before.pos[i].z) > p.halfSize;
    before = std::move(after);
  }
  core::SimParams wrap = p;
  wrap.boundary = core::Boundary::Wrap;
  auto walled = core::createCpuEngine(wrap);
  walled->reset(bodies);
  walled->step(c.steps);
  const core::Bodies w = walled->readBodies();
  for (size_t i = 0; i < w.size(); ++i) t.differFromWrap += std::memcmp(&w.pos[i], &before.pos[i], sizeof(core::Vec4)) != 0;
  return t;
}

// The periodic worlds of the tests below: a clump drifting through the top z face into the bottom
// one, and a uniform world whose bodies move up to 12 of a cell of 5 a step (many cross a face
// every step).
Case periodicClump(core::Pipeline pipe, size_t n, int steps, float halfSize) {
  return {"face-clump", n, steps, kBoids, pipe, 0, halfSize, 0, core::Boundary::Periodic};
}
Case periodicFast(core::Pipeline pipe, size_t n, int steps, float halfSize) {
  return {"uniform", n, steps, kBoids, pipe, 12.0f, halfSize, 0, core::Boundary::Periodic};
}

// Uniform worlds whose rows grids take each of the GPU rows kernel's loops (core::rowLoop).
std::vector<Case> rowsLoopCases() {
  const core::Pipeline rows = core::Pipeline::Rows;
  return {
      {"uniform", 200000, 50, kBoids, rows, 0, 100.0f, 1},  // 3.1 per cell: short
      {"uniform", 200000, 50, kBoids, rows, 0, 36.0f, 1},   // 67 per classic cell, 8.4 per fine cell: flat
      {"uniform", 200000, 50, kBoids, rows, 0, 59.0f, 2},   // 122 per classic cell, 15.2 per fine cell: batched
  };
}

// The cases above cover the three loops; no GPU needed to check that.
TEST(DistParams, RowsLoopCasesCoverEveryLoop) {
  std::vector<core::RowLoop> loops;
  for (const Case& c : rowsLoopCases()) {
    core::SimParams p = core::defaultParams();
    p.halfSize = c.halfSize;
    p.cellWidthFactor = c.cellWidth;
    loops.push_back(core::rowLoop(p, c.n));
  }
  EXPECT_EQ(loops, (std::vector<core::RowLoop>{core::RowLoop::Short, core::RowLoop::Flat, core::RowLoop::Batched}));
}

class DistCpu : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!haveMpi()) GTEST_SKIP() << "this build has no MPI";
  }
  static std::unique_ptr<core::Engine> single(const core::SimParams& p) { return core::createCpuEngine(p); }
};

TEST_F(DistCpu, BoidsMatchOneRankToTheBit) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    runCase(core::EngineKind::Cpu, {"uniform", 6000, 40, kBoids, pipe}, single);
  });
}

TEST_F(DistCpu, ClumpedBoidsMatchOneRankWhileTheSlabsMove) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    int rebalances = 0;
    runCase(core::EngineKind::Cpu, {"drifting-clump", 4000, 70, kBoids, pipe}, single, &rebalances);
    if (launchedRanks() > 1) {
      EXPECT_GT(rebalances, 0) << "the clumped case should have moved the slabs";
    }
  });
}

TEST_F(DistCpu, FastBoidsJumpingPastTheHaloMatchOneRank) {
  // dt 12: a body at full speed moves 12 of a cell width of 5, past the neighbour's halo plane
  // (the rows grid's halo of 2 planes of 5 too).
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    runCase(core::EngineKind::Cpu, {"uniform", 3000, 25, kBoids, pipe, 12.0f}, single);
  });
}

// The rows grid where classic cells are crowded: cells of half the width, split along x, a halo
// of 3 planes. A clump drifting through a small world makes the balanced slabs thinner than the
// halo, so that a rank reads planes of ranks beyond its neighbours; bodies wrap at the faces.
TEST_F(DistCpu, RowsWithAHaloOfSeveralPlanesMatchOneRank) {
  core::SimParams p = core::defaultParams();
  p.pipeline = core::Pipeline::Rows;
  p.halfSize = 19.0f;
  const core::GridSpec g = rankGrid(p, 6000);
  ASSERT_EQ(core::rowCellsPerRadius(p, 6000), 2);  // 13.7 bodies per classic cell
  ASSERT_GE(core::rowXSplit(g), 2.0f);
  ASSERT_EQ(rankHaloPlanes(p, g), 3);
  RunInfo uniform, clump;
  runCase(core::EngineKind::Cpu, {"uniform", 6000, 40, kBoids, core::Pipeline::Rows, 0, 19.0f}, single, nullptr,
          &uniform);
  EXPECT_EQ(uniform.halo, 3);
  runCase(core::EngineKind::Cpu, {"drifting-clump", 6000, 60, kBoids, core::Pipeline::Rows, 0, 19.0f}, single,
          nullptr, &clump);
  if (launchedRanks() > 2) {
    EXPECT_GT(clump.rebalances, 0);
    EXPECT_LT(clump.thinnest, clump.halo) << "a slab thinner than the halo was meant to be tested";
  }
}

// --boundary periodic: the slabs' halos wrap around z (dist/slabs.h), so that the searches around
// the images of a body near a z face find, on its rank, every body one rank finds across the face.
// The worlds of the periodic tests end inside their grids' last plane (202 is 40.4 cells of 5 and
// 20.2 of 10; 62 is 12.4 of 5), where the searches around the images read the plane more across
// the face (slabs.h rankWrapHaloPlanes).
TEST_F(DistCpu, VicsekNoiseDrawsAlikeOverAnyRankCount) { expectVicsekMatchesOneRank(core::EngineKind::Cpu, 6000, single); }

TEST_F(DistCpu, CouzinMatchesOneRankToTheBit) { expectCouzinMatchesOneRank(core::EngineKind::Cpu, 6000, single); }

TEST_F(DistCpu, PeriodicBoidsMatchOneRankToTheBit) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    for (int cellWidth : {1, 2}) {
      SCOPED_TRACE("cell width " + std::to_string(cellWidth));
      RunInfo info;
      runCase(core::EngineKind::Cpu,
              {"uniform", 6000, 40, kBoids, pipe, 0, 101.0f, cellWidth, core::Boundary::Periodic}, single, nullptr,
              &info);
      EXPECT_EQ(info.wrapHalo, info.halo + 1);
    }
  });
}

// Most bodies in a clump that straddles the top z face and drifts through it: they see each other
// across the face from the first step, the first and the last slabs hold them, and the slabs
// follow the clump around the face.
TEST_F(DistCpu, PeriodicClumpDriftingThroughTheZFaceMatchesOneRank) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    const Case c = periodicClump(pipe, 4000, 70, 31.0f);
    RunInfo info;
    runCase(core::EngineKind::Cpu, c, single, nullptr, &info);
    if (launchedRanks() > 1) {
      EXPECT_GT(info.rebalances, 0) << "the clump should have moved the slabs";
    }
    if (MpiWorld::get()->rank() == 0) {
      const FaceTraffic t = faceTraffic(c);
      EXPECT_GT(t.crossings, 700u) << "the clump should cross the z face";
      EXPECT_GT(t.differFromWrap, 3000u) << "the clump should feel the periodic boundary";
    }
  });
}

TEST_F(DistCpu, FastPeriodicBoidsCrossingTheZFacesMatchOneRank) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    const Case c = periodicFast(pipe, 3000, 25, 31.0f);
    runCase(core::EngineKind::Cpu, c, single);
    if (MpiWorld::get()->rank() == 0) {
      const FaceTraffic t = faceTraffic(c);
      EXPECT_GT(t.crossings, 2000u) << "the fast bodies should cross the z faces";
      EXPECT_GT(t.differFromWrap, 2000u) << "the fast bodies should feel the periodic boundary";
    }
  });
}

// Reflecting walls: bodies moving up to 12 a step in a box of half-size 31 meet the z walls every
// few steps and turn there, inside the first and the last slab; the run equals one rank's.
TEST_F(DistCpu, FastBoidsTurningAtTheWallsMatchOneRank) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    runCase(core::EngineKind::Cpu, {"uniform", 3000, 25, kBoids, pipe, 12.0f, 31.0f, 0, core::Boundary::Reflect},
            single);
  });
}

// The rows grid's halo of 3 planes (4 across the face) with the clump at the face: the slabs
// near it get thinner than the halo, so that a rank reads planes across the face from ranks
// beyond its neighbours there, and on 4 ranks some plane is every rank's.
TEST_F(DistCpu, PeriodicRowsWithAHaloOfSeveralPlanesMatchOneRank) {
  core::SimParams p = core::defaultParams();
  p.pipeline = core::Pipeline::Rows;
  p.halfSize = 19.0f;
  ASSERT_EQ(rankHaloPlanes(p, rankGrid(p, 6000)), 3);
  RunInfo uniform, clump;
  runCase(core::EngineKind::Cpu, {"uniform", 6000, 40, kBoids, core::Pipeline::Rows, 0, 19.0f, 0,
                                  core::Boundary::Periodic},
          single, nullptr, &uniform);
  EXPECT_EQ(uniform.halo, 3);
  EXPECT_EQ(uniform.wrapHalo, 4);
  runCase(core::EngineKind::Cpu, periodicClump(core::Pipeline::Rows, 6000, 60, 19.0f), single, nullptr, &clump);
  if (launchedRanks() > 2) {
    EXPECT_GT(clump.rebalances, 0);
    EXPECT_LT(clump.thinnest, clump.halo) << "a slab thinner than the halo was meant to be tested";
    EXPECT_EQ(clump.mostNeeding, launchedRanks()) << "some plane should be every rank's";
  }
}

// The plane under the periodic boundary: one rank runs it (the ranks cut slabs along z, which the
// plane does not have) as the CPU engine does; more ranks refuse it as any plane.
TEST_F(DistCpu, APeriodicPlaneRunsOnOneRankAsTheCpuEngine) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    const Case plane{"uniform", 4000, 30, kBoids, pipe, 0, 0, 0, core::Boundary::Periodic, 2};
    if (launchedRanks() == 1) {
      runCase(core::EngineKind::Cpu, plane, single);
      return;
    }
    core::Bodies bodies;
    const core::SimParams p = paramsFor(plane, bodies);
    try {
      createDistEngine(core::EngineKind::Cpu, p);
      FAIL() << "a plane over several ranks accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("--dims 2: a 2D world runs on one rank"), std::string::npos) << e.what();
    }
  });
}

// An open world grows its box as the bodies fly, which the slabs of several ranks cannot follow:
// more ranks refuse it in one line that names the boundaries they run; one rank runs it. The same
// for topological neighbours.
TEST_F(DistCpu, AnOpenWorldRunsOnOneRank) {
  core::SimParams p = core::defaultParams();
  p.boundary = core::Boundary::Open;
  EXPECT_EQ(validateDistParams(p, 1), "");
  EXPECT_NE(validateDistParams(p, 2).find("--boundary open: an open world runs on one rank"), std::string::npos)
      << validateDistParams(p, 2);
  // So do topological neighbours: a body's K nearest may lie beyond any halo.
  p.boundary = core::Boundary::Wrap;
  p.topological = 7;
  EXPECT_EQ(validateDistParams(p, 1), "");
  EXPECT_NE(validateDistParams(p, 2).find("--topological 7: topological neighbours run on one rank"), std::string::npos);
}

// The boundary changes between steps without a reset, as on one engine: the halo across the faces
// comes with the next exchange and goes with the one after the change back.
TEST_F(DistCpu, ABoundaryChangeBetweenStepsMatchesOneRank) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    core::Bodies bodies;
    const core::SimParams walled = paramsFor({"face-clump", 4000, 0, kBoids, pipe, 0, 31.0f}, bodies);
    core::SimParams periodic = walled;
    periodic.boundary = core::Boundary::Periodic;
    auto engine = createDistEngine(core::EngineKind::Cpu, walled);
    auto* d = dynamic_cast<DistEngine*>(engine.get());
    ASSERT_NE(d, nullptr);
    std::unique_ptr<core::Engine> one;
    if (d->rank() == 0) one = core::createCpuEngine(walled);
    for (core::Engine* e : {engine.get(), one.get()}) {
      if (!e) continue;
      e->reset(bodies);
      e->step(10);
      e->setParams(periodic);
      if (e == engine.get()) {
        EXPECT_GT(d->layout().wrapHalo, 0);
      }
      e->step(15);
      e->setParams(walled);
      if (e == engine.get()) {
        EXPECT_EQ(d->layout().wrapHalo, 0);
      }
      e->step(5);
    }
    const core::Bodies got = engine->readBodies();
    if (one) expectIdentical(one->readBodies(), got, "wrap, periodic, wrap over ranks");
  });
}

TEST_F(DistCpu, PeriodicBodiesMadeInSharesRunAsBodiesMadeWhole) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    expectShareResetIsReset(core::EngineKind::Cpu, kBoids, pipe, "dense", 6001, 30, core::Boundary::Periodic);
  });
}

TEST_F(DistCpu, GravityAllPairsMatchesOneRankToTheBit) {
  // 1001 bodies: the ranks' shares differ in size.
  runCase(core::EngineKind::Cpu, {"plummer", 1001, 8, kGravity, onRanks(kGravity)}, single);
}

// The tree over ranks: every rank builds one engine's tree over the gathered positions and walks
// its share of the groups; the bodies and the step count make the shares uneven, and two colliding
// galaxies give the tree structure at several scales.
TEST_F(DistCpu, GravityTreeMatchesOneRankToTheBit) {
  runCase(core::EngineKind::Cpu, {"plummer", 1001, 8, kGravity, core::Pipeline::Tree}, single);
  runCase(core::EngineKind::Cpu, {"galaxies", 3000, 6, kGravity, core::Pipeline::Tree}, single);
}

// A change of the gravity method between steps (all pairs, then the tree at another theta):
// several ranks drop the leapfrog's kept accelerations as one engine does (core::forceFieldChanged),
// so the first kick after the change already uses the tree's field, and the runs stay equal.
TEST_F(DistCpu, AChangeOfTheGravityMethodBetweenStepsMatchesOneRank) {
  core::Bodies bodies;
  const core::SimParams p = paramsFor({"plummer", 1001, 0, kGravity, onRanks(kGravity)}, bodies);
  core::SimParams tree = p;
  tree.pipeline = core::Pipeline::Tree;
  tree.gravity.theta = 0.4f;
  auto engine = createDistEngine(core::EngineKind::Cpu, p);
  auto* d = dynamic_cast<DistEngine*>(engine.get());
  ASSERT_NE(d, nullptr);
  std::unique_ptr<core::Engine> single = core::createCpuEngine(p);
  for (core::Engine* e : {engine.get(), single.get()}) {
    e->reset(bodies);
    e->step(3);
    e->setParams(tree);
    e->step(3);
  }
  const core::Bodies got = engine->readBodies();
  EXPECT_EQ(engine->stepCount(), 6u);  // every rank counts the steps, as one engine does
  EXPECT_EQ(single->stepCount(), 6u);
  if (d->rank() == 0) expectIdentical(single->readBodies(), got, "all pairs, then the tree, over ranks");
}

TEST_F(DistCpu, CompositedFrameIsOneImageOfEveryBody) {
  expectCompositeIsOneImage(core::EngineKind::Cpu, {"uniform", 6000, 10, kBoids, onRanks(kBoids)});
  expectCompositeIsOneImage(core::EngineKind::Cpu, {"plummer", 2001, 2, kGravity, onRanks(kGravity)});
}

TEST_F(DistCpu, BodiesMadeInSharesRunAsBodiesMadeWhole) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    expectShareResetIsReset(core::EngineKind::Cpu, kBoids, pipe, "dense", 6001, 30);
  });
  expectShareResetIsReset(core::EngineKind::Cpu, kGravity, onRanks(kGravity), "uniform", 1001, 4);
}

// A share that is not the rank's run of ids is refused on every rank, naming the rank.
TEST_F(DistCpu, AShareOfTheWrongIdsIsRefusedEverywhere) {
  core::SimParams p = core::defaultParams();
  core::ScenarioSpec spec;
  spec.name = "dense";
  spec.n = 3000;
  p.halfSize = core::makeScenarioShare(spec, p, 0, 0).halfSize;
  auto engine = createDistEngine(core::EngineKind::Cpu, p);
  core::RankAccess& ra = *engine->rankAccess();
  const int bad = ra.numRanks() - 1;
  size_t first = 0, last = 0;
  ra.idShare(spec.n, &first, &last);
  if (ra.rank() == bad) ++first;  // one body short
  try {
    ra.resetShare(core::makeScenarioShare(spec, p, first, last).bodies, spec.n);
    FAIL() << "a short share went unnoticed";
  } catch (const JobError& e) {
    EXPECT_NE(std::string(e.what()).find("rank " + std::to_string(bad) + ": reset: this rank's share holds"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.status(), 2);
  }
}

// The host store, except that on one rank one stage throws at a chosen step, as a GPU store does
// when a buffer no longer fits or a kernel faults.
class FailingStore final : public LocalStore {
 public:
  enum class Where { Pack, LocalStep };
  FailingStore(std::unique_ptr<LocalStore> s, Where where, int atCall, bool badInput)
      : s_(std::move(s)), where_(where), atCall_(atCall), badInput_(badInput) {}
  core::EngineKind kind() const override { return s_->kind(); }
  std::string deviceName() const override { return s_->deviceName(); }
  void setParams(const core::SimParams& p) override { s_->setParams(p); }
  void setProfiling(bool on) override { s_->setProfiling(on); }
  core::DeviceInfo deviceInfo() const override { return s_->deviceInfo(); }
  void checkFits(size_t o, size_t t, const core::SimParams& p) override { s_->checkFits(o, t, p); }
  void setOwned(const core::Bodies& b, const std::vector<uint64_t>& t, const core::GridSpec& g,
                size_t total) override {
    s_->setOwned(b, t, g, total);
  }
  size_t numOwned() const override { return s_->numOwned(); }
  core::Bodies readOwned() override { return s_->readOwned(); }
  void synchronize() override { s_->synchronize(); }
  std::vector<uint64_t> packOutgoing(const SlabLayout& l, const core::GridSpec& g, int me) override {
    if (where_ == Where::Pack) fail();
    return s_->packOutgoing(l, g, me);
  }
  const void* sendBuffer() const override { return s_->sendBuffer(); }
  void* recvBuffer(size_t r) override { return s_->recvBuffer(r); }
  void mergeReceived(const std::vector<uint64_t>& c) override { s_->mergeReceived(c); }
  void boidsLocalStep(const SlabLayout& l, const core::GridSpec& g, int me, uint64_t step,
                      core::StepProfile& prof) override {
    if (where_ == Where::LocalStep) fail();
    s_->boidsLocalStep(l, g, me, step, prof);
  }
  std::vector<uint64_t> planeHistogram(const core::GridSpec& g) override { return s_->planeHistogram(g); }
  const void* ownedPositions() override { return s_->ownedPositions(); }
  void* allPositions(size_t n) override { return s_->allPositions(n); }
  void gravityForces(size_t n, float e, float G, float m, core::StepProfile& p) override {
    s_->gravityForces(n, e, G, m, p);
  }
  void leapfrogKickDrift(float dt) override { s_->leapfrogKickDrift(dt); }
  void leapfrogKick(float dt) override { s_->leapfrogKick(dt); }
  void dampedEuler(float dt, float d) override { s_->dampedEuler(dt, d); }
  std::vector<core::Vec4> readOwnedAcc() override { return s_->readOwnedAcc(); }
  std::vector<size_t> treeWalkShare(size_t n, const core::GravityParams& gp, int me, int k,
                                    core::StepProfile& p) override {
    return s_->treeWalkShare(n, gp, me, k, p);
  }
  const void* treeSortedAcc() override { return s_->treeSortedAcc(); }
  void* treeGatheredAcc() override { return s_->treeGatheredAcc(); }
  void takeTreeAcc(size_t first, size_t last) override { s_->takeTreeAcc(first, last); }
  uint64_t* splatOwned(const core::SplatView& v) override { return s_->splatOwned(v); }
  void readSplat(std::vector<uint64_t>& keys) override { s_->readSplat(keys); }

 private:
  void fail() {
    if (++calls_ != atCall_) return;
    if (badInput_) throw core::UsageError("--n 5: this rank's share does not fit (injected)");
    throw std::runtime_error("cudaMalloc: out of memory (injected)");
  }
  std::unique_ptr<LocalStore> s_;
  Where where_;
  int atCall_, calls_ = 0;
  bool badInput_;
};

// Every rank ends the step with the same JobError naming the failed rank and its cause; nobody
// waits for the failed rank in a transfer.
void expectAgreedFailure(FailingStore::Where where, bool badInput) {
  core::Bodies bodies;
  const core::SimParams p = paramsFor({"uniform", 2000, 0, kBoids, onRanks(kBoids)}, bodies);
  std::shared_ptr<MpiWorld> world = MpiWorld::get();
  const int failing = world->size() - 1;  // the last rank, so rank 0 reports another rank's failure
  std::unique_ptr<LocalStore> store = createHostStore(p);
  if (world->rank() == failing) store = std::make_unique<FailingStore>(std::move(store), where, 4, badInput);
  DistEngine engine(createMpiTransport(world), std::move(store), p);
  engine.reset(bodies);
  try {
    engine.step(10);
    FAIL() << "the failure on rank " << failing << " went unnoticed";
  } catch (const JobError& e) {
    const std::string want = "rank " + std::to_string(failing) + ": " +
                             (badInput ? "--n 5: this rank's share does not fit (injected)"
                                       : "cudaMalloc: out of memory (injected)");
    EXPECT_EQ(std::string(e.what()), want);
    EXPECT_EQ(e.status(), badInput ? 2 : 1);
  }
}

TEST_F(DistCpu, ARankThatThrowsBeforeTheExchangeEndsEveryRankWithItsCause) {
  expectAgreedFailure(FailingStore::Where::Pack, false);
}

TEST_F(DistCpu, ARankThatThrowsInItsLocalStepEndsEveryRankWithItsCause) {
  expectAgreedFailure(FailingStore::Where::LocalStep, true);
}

// Every boids pipeline the table does not mark for ranks (all but coherent and rows), every rank
// alike.
TEST_F(DistCpu, UnsupportedPipelinesAreRejectedWithOneLine) {
  int refused = 0;
  for (core::Pipeline pipe : core::pipelinesFor(kBoids)) {
    if (core::runsOnRanks(pipe, kBoids)) continue;
    core::SimParams p = core::defaultParams();
    p.pipeline = pipe;
    try {
      createDistEngine(core::EngineKind::Cpu, p);
      FAIL() << core::toString(pipe) << " boids accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("--pipeline ") + core::toString(pipe)), std::string::npos)
          << e.what();
      ++refused;
    }
  }
  EXPECT_GE(refused, 1);  // scattered among them
}

// Which pipelines several ranks run is the table's (kOnRanks* in core/pipeline_table.h): every
// pipeline of every force is accepted exactly when the table says so, and the refusals keep their
// words. Parameters only, no ranks needed: runs in the one-rank test.
TEST(DistParams, PipelinesOverRanksAreTheTables) {
  int accepted = 0;
  for (const core::PipelineInfo& row : core::pipelineTable())
    for (core::ForceMode f : {core::ForceMode::Boids, core::ForceMode::Gravity}) {
      core::SimParams p = core::defaultParams();
      p.force = f;
      p.pipeline = row.id;
      if (!core::validateParams(p).empty()) continue;  // tree boids: refused before the ranks are asked
      const std::string err = validateDistParams(p, 1);
      EXPECT_EQ(err.empty(), core::runsOnRanks(row.id, f)) << row.name << " " << core::toString(f) << ": " << err;
      accepted += err.empty();
    }
  EXPECT_EQ(accepted, 4);  // coherent and rows boids, all-pairs and tree gravity
  EXPECT_EQ(onRanks(kBoids), core::Pipeline::Rows);
  EXPECT_EQ(onRanks(kGravity), core::Pipeline::Naive);
  core::SimParams p = core::defaultParams();
  p.pipeline = core::Pipeline::Scattered;
  EXPECT_EQ(validateDistParams(p, 1),
            "--pipeline scattered: over several ranks boids run the rows pipeline (allowed: coherent or rows)");
  p.pipeline = core::Pipeline::Verlet;
  EXPECT_EQ(validateDistParams(p, 1),
            "--pipeline verlet: over several ranks boids run the rows pipeline (allowed: coherent or rows)");
  p.force = core::ForceMode::Gravity;
  p.pipeline = core::Pipeline::Scattered;
  EXPECT_EQ(validateDistParams(p, 1),
            "--pipeline scattered: over several ranks gravity runs all pairs (allowed: naive or tree)");
}

#if defined(MURMUR_TEST_CUDA)
class DistCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    if (!haveMpi()) GTEST_SKIP() << "this build has no MPI";
    if (!cuda::deviceAvailable(&why)) GTEST_SKIP() << "no usable CUDA device: " << why;
  }
  static std::unique_ptr<core::Engine> single(const core::SimParams& p) { return cuda::createCudaEngine(p); }
};

TEST_F(DistCuda, BoidsMatchOneGpuToTheBit) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    runCase(core::EngineKind::Cuda, {"uniform", 200000, 60, kBoids, pipe}, single);
  });
}

TEST_F(DistCuda, ClumpedBoidsMatchOneGpuWhileTheSlabsMove) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    int rebalances = 0;
    runCase(core::EngineKind::Cuda, {"drifting-clump", 100000, 100, kBoids, pipe}, single, &rebalances);
    if (launchedRanks() > 1) {
      EXPECT_GT(rebalances, 0);
    }
  });
}

TEST_F(DistCuda, FastBoidsJumpingPastTheHaloMatchOneGpu) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    runCase(core::EngineKind::Cuda, {"uniform", 100000, 40, kBoids, pipe, 12.0f}, single);
  });
}

// The one-GPU rows kernel has three loops (core::rowLoop) chosen by the whole count's occupancy;
// over ranks each must sum as on one GPU (RowsLoopCasesCoverEveryLoop checks the choice). A
// drifting clump (a halo of 3 planes, slabs thinner than it on 3 ranks) on top.
TEST_F(DistCuda, RowsMatchOneGpuInEveryLoop) {
  for (const Case& c : rowsLoopCases()) {
    SCOPED_TRACE(c.scenario + " half-size " + std::to_string(c.halfSize));
    runCase(core::EngineKind::Cuda, c, single);
  }
  runCase(core::EngineKind::Cuda, {"drifting-clump", 200000, 80, kBoids, core::Pipeline::Rows, 0, 50.0f}, single);
}

// Rows over GPU ranks sort each local set with the counting sort over the rank's own cells, and
// the selection before the exchange reads only the owned bodies near the slab's faces; both
// give one GPU's result to the bit. At dt 12 a body may cross many planes a step: every owned
// body is read.
TEST_F(DistCuda, RowsCountTheLocalCellsAndSelectOnlyNearTheFaces) {
  const core::Pipeline rows = core::Pipeline::Rows;
  const size_t n = 1000000;
  const Case slow{"uniform", n, 30, kBoids, rows}, fast{"uniform", n, 10, kBoids, rows, 12.0f};
  const double share = double(n) / launchedRanks();
  for (const Case& c : {slow, fast}) {
    SCOPED_TRACE("dt " + std::to_string(c.dt));
    RunInfo info;
    runCase(core::EngineKind::Cuda, c, single, nullptr, &info);
    EXPECT_TRUE(info.counted);
    // The planes within the halo and a step's reach of either face, of a uniform world's slab.
    core::Bodies unused;
    const core::SimParams p = paramsFor(c, unused);
    const core::GridSpec g = rankGrid(p, n);
    const int edge = info.halo + 1 + int(std::ceil(double(p.boids.maxSpeed) * p.boids.dt * g.invCellWidth));
    if (2 * edge >= info.slab) {
      EXPECT_GT(double(info.selectionRead), 0.9 * share) << "a slab of edges only: every owned body is read";
    } else {
      EXPECT_GT(info.selectionRead, 0u);
      EXPECT_LT(double(info.selectionRead), 1.2 * share * 2 * edge / info.slab)
          << "the selection should read the " << 2 * edge << " edge planes of " << info.slab;
    }
  }
}

// A cell of the rows grid with hundreds of bodies: the counting sort gives way to the radix sort
// in the step that meets it (one GPU forced to the radix sort, whose order it must give). Each
// rank decides for its own cells; crowdedBlob puts a crowded cell in every rank's slab.
TEST_F(DistCuda, RowsWithACrowdedCellTakeTheRadixSortAndMatchOneGpu) {
  RunInfo info;
  auto radix = [](const core::SimParams& p) {
    auto e = cuda::createCudaEngine(p);
    dynamic_cast<cuda::CudaEngine&>(*e).debugSetGridSort(cuda::CudaEngine::GridSort::Radix);
    return e;
  };
  runCase(core::EngineKind::Cuda, {"crowded-blob", 60000, 30, kBoids, core::Pipeline::Rows}, radix, nullptr, &info);
  EXPECT_FALSE(info.counted);
}

// --boundary periodic over GPU ranks: the device store's halo wraps around z (its selection, the
// records per peer and its local set's cells cover both ends of the grid), and the force pass
// searches around the images as on one GPU.
// Worlds that end inside their grids' last plane, as in the CPU tests.
TEST_F(DistCuda, VicsekNoiseDrawsAlikeOverAnyRankCount) {
  expectVicsekMatchesOneRank(core::EngineKind::Cuda, 200000, single);
}

TEST_F(DistCuda, CouzinMatchesOneGpuToTheBit) { expectCouzinMatchesOneRank(core::EngineKind::Cuda, 100000, single); }

TEST_F(DistCuda, PeriodicBoidsMatchOneGpuToTheBit) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    for (int cellWidth : {1, 2}) {
      SCOPED_TRACE("cell width " + std::to_string(cellWidth));
      runCase(core::EngineKind::Cuda,
              {"uniform", 200000, 60, kBoids, pipe, 0, 101.0f, cellWidth, core::Boundary::Periodic}, single);
    }
  });
}

TEST_F(DistCuda, FastBoidsTurningAtTheWallsMatchOneGpu) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    runCase(core::EngineKind::Cuda, {"uniform", 100000, 40, kBoids, pipe, 12.0f, 101.0f, 0, core::Boundary::Reflect},
            single);
  });
}

TEST_F(DistCuda, PeriodicClumpDriftingThroughTheZFaceMatchesOneGpu) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    RunInfo info;
    runCase(core::EngineKind::Cuda, periodicClump(pipe, 100000, 100, 101.0f), single, nullptr, &info);
    if (launchedRanks() > 1) {
      EXPECT_GT(info.rebalances, 0);
    }
  });
}

TEST_F(DistCuda, FastPeriodicBoidsCrossingTheZFacesMatchOneGpu) {
  forEachBoidsPipeline(
      [&](core::Pipeline pipe) { runCase(core::EngineKind::Cuda, periodicFast(pipe, 100000, 40, 101.0f), single); });
}

// The rows grid's halo of 3 planes (4 across the face), the clump at the face: thin slabs there,
// and the ranks at both ends count every cell of the grid in their counting sort.
TEST_F(DistCuda, PeriodicRowsWithAHaloOfSeveralPlanesMatchOneGpu) {
  RunInfo info;
  runCase(core::EngineKind::Cuda, periodicClump(core::Pipeline::Rows, 200000, 80, 51.0f), single, nullptr, &info);
  EXPECT_GE(info.wrapHalo, info.halo + 1);
  runCase(core::EngineKind::Cuda, {"uniform", 1000000, 20, kBoids, core::Pipeline::Rows, 0, 101.0f, 0,
                                   core::Boundary::Periodic},
          single, nullptr, &info);
  EXPECT_TRUE(info.counted);
}

TEST_F(DistCuda, PeriodicBodiesMadeInSharesRunAsBodiesMadeWhole) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    expectShareResetIsReset(core::EngineKind::Cuda, kBoids, pipe, "dense", 100000, 30, core::Boundary::Periodic);
  });
}

TEST_F(DistCuda, GravityAllPairsMatchesOneGpuToTheBit) {
  runCase(core::EngineKind::Cuda, {"plummer", 50001, 5, kGravity, onRanks(kGravity)}, single);
}

// The tree over GPU ranks: every rank builds one GPU's tree and walks its share of the groups.
TEST_F(DistCuda, GravityTreeMatchesOneGpuToTheBit) {
  runCase(core::EngineKind::Cuda, {"plummer", 50001, 5, kGravity, core::Pipeline::Tree}, single);
  runCase(core::EngineKind::Cuda, {"galaxies", 30000, 6, kGravity, core::Pipeline::Tree}, single);
}

TEST_F(DistCuda, BodiesMadeInSharesRunAsBodiesMadeWhole) {
  forEachBoidsPipeline([&](core::Pipeline pipe) {
    expectShareResetIsReset(core::EngineKind::Cuda, kBoids, pipe, "dense", 100000, 30);
  });
}

// Each GPU splats its own bodies and NCCL reduces the images.
TEST_F(DistCuda, CompositedFrameIsOneImageOfEveryBody) {
  expectCompositeIsOneImage(core::EngineKind::Cuda, {"uniform", 200000, 10, kBoids, onRanks(kBoids)});
  expectCompositeIsOneImage(core::EngineKind::Cuda, {"plummer", 50001, 2, kGravity, onRanks(kGravity)});
}
#endif

}  // namespace
}  // namespace murmur::dist
