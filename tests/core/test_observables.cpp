// The reference observables (core/observables.h) against independent double-precision brute
// force on random states, and against known answers on constructed ones.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/cpu_engine.h"
#include "core/observables.h"
#include "core/rng.h"
#include "test_helpers.h"

namespace murmur::core {
namespace {

double dist(const Vec4& a, const Vec4& b) {
  const double dx = double(a.x) - b.x, dy = double(a.y) - b.y, dz = double(a.z) - b.z;
  return std::sqrt(dx * dx + dy * dy + dz * dz);
}

SimParams boidParams(float h) {
  SimParams p = defaultParams();
  p.force = ForceMode::Boids;
  p.halfSize = h;
  return p;
}

// Everything the boids columns say, by all pairs in double and a breadth-first search.
Observables bruteBoids(const Bodies& b, const SimParams& p, uint32_t minSize) {
  const size_t n = b.size();
  Observables o;
  double ux = 0, uy = 0, uz = 0, sp = 0, nn = 0, c1 = 0, c2 = 0, c3 = 0;
  std::vector<std::vector<uint32_t>> adj(n);
  for (size_t i = 0; i < n; ++i) {
    const Vec4 v = b.vel[i];
    const double s = std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
    sp += s, ux += v.x / s, uy += v.y / s, uz += v.z / s;
    double best = INFINITY;
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double d = dist(b.pos[i], b.pos[j]);
      best = std::min(best, d);
      c1 += d < p.boids.cohesionRadius, c2 += d < p.boids.separationRadius, c3 += d < p.boids.alignmentRadius;
      if (d < p.boids.cohesionRadius) adj[i].push_back(uint32_t(j));
    }
    nn += best;
  }
  o[Obs::Polarization] = std::sqrt(ux * ux + uy * uy + uz * uz) / n;
  o[Obs::MeanSpeed] = sp / n;
  o[Obs::NearestDistance] = nn / n;
  o[Obs::NeighboursCohesion] = c1 / n, o[Obs::NeighboursSeparation] = c2 / n, o[Obs::NeighboursAlignment] = c3 / n;
  std::vector<int> comp(n, -1);
  std::vector<std::vector<uint32_t>> flocks;
  for (size_t s = 0; s < n; ++s) {
    if (comp[s] >= 0) continue;
    flocks.emplace_back();
    std::vector<uint32_t> stack{uint32_t(s)};
    comp[s] = int(flocks.size() - 1);
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      flocks.back().push_back(i);
      for (uint32_t j : adj[i])
        if (comp[j] < 0) comp[j] = comp[s], stack.push_back(j);
    }
  }
  for (Obs bin : {Obs::Flocks1, Obs::Flocks2to9, Obs::Flocks10to99, Obs::Flocks100to999, Obs::Flocks1000Plus})
    o[bin] = 0;
  double largest = 0, mill = 0, w = 0;
  for (const auto& f : flocks) {
    largest = std::max(largest, double(f.size()));
    o[flockSizeBin(f.size())] += 1;
    if (f.size() < minSize) continue;
    double cx = 0, cy = 0, cz = 0;
    for (uint32_t i : f) cx += b.pos[i].x, cy += b.pos[i].y, cz += b.pos[i].z;
    cx /= f.size(), cy /= f.size(), cz /= f.size();
    double lx = 0, ly = 0, lz = 0, den = 0;
    for (uint32_t i : f) {
      const double dx = b.pos[i].x - cx, dy = b.pos[i].y - cy, dz = b.pos[i].z - cz;
      const double vx = b.vel[i].x, vy = b.vel[i].y, vz = b.vel[i].z;
      lx += dy * vz - dz * vy, ly += dz * vx - dx * vz, lz += dx * vy - dy * vx;
      den += std::sqrt(dx * dx + dy * dy + dz * dz) * std::sqrt(vx * vx + vy * vy + vz * vz);
    }
    mill += f.size() * std::sqrt(lx * lx + ly * ly + lz * lz) / den;
    w += f.size();
  }
  o[Obs::Flocks] = double(flocks.size());
  o[Obs::LargestFlockShare] = largest / n;
  if (w > 0) o[Obs::Milling] = mill / w;
  return o;
}

void expectNear(const Observables& got, const Observables& want, const std::vector<Obs>& cols, double rel) {
  for (Obs c : cols) {
    const char* name = observableDesc(c).column;
    if (std::isnan(want[c])) {
      EXPECT_TRUE(std::isnan(got[c])) << name;
      continue;
    }
    // The nearest distance is the root of a float d^2 (the physics' own test), the brute force's
    // a double: they differ by float rounding.
    const double tol = c == Obs::NearestDistance ? std::max(rel, 1e-6) : rel;
    EXPECT_NEAR(got[c], want[c], tol * std::max(1.0, std::fabs(want[c]))) << name;
  }
}

TEST(Observables, TableFollowsTheEnumerators) {
  ASSERT_EQ(observableTable().size(), size_t(kObsCount));
  for (int i = 0; i < kObsCount; ++i) EXPECT_EQ(int(observableTable()[size_t(i)].id), i);
  EXPECT_EQ(observedColumns(ForceMode::Boids, false).size(), 6u);
  EXPECT_EQ(observedColumns(ForceMode::Boids, true).size(), 14u);
}

TEST(Observables, AllAlignedGivesPolarizationOne) {
  Bodies b = test::randomBodies(500, 50, 1, 3);
  for (auto& v : b.vel) v = Vec4{0.3f, -0.4f, 1.2f, 0};
  const Observables o = observeBodies(b.pos, b.vel, boidParams(50), ObserveRequest{});
  EXPECT_NEAR(o[Obs::Polarization], 1.0, 1e-12);
  EXPECT_NEAR(o[Obs::MeanSpeed], 1.3, 1e-6);
  EXPECT_TRUE(std::isnan(o[Obs::Flocks]));  // not asked for
}

TEST(Observables, BoidsMatchBruteForceOnRandomStates) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    // Dense enough that flocks of every size bin but the largest appear.
    const float h = 25;
    Bodies b = test::randomBodies(1500, h, 1, seed);
    const SimParams p = boidParams(h);
    ObserveRequest r;
    r.flocks = true;
    r.millingMinSize = 5;
    const Observables got = observeBodies(b.pos, b.vel, p, r);
    const Observables want = bruteBoids(b, p, 5);
    expectNear(got, want, observedColumns(ForceMode::Boids, true), 1e-9);
    EXPECT_GT(want[Obs::Flocks], 1);
    EXPECT_GT(want[Obs::Flocks1000Plus] + want[Obs::Flocks100to999], 0) << "the state should hold a large flock";
    EXPECT_FALSE(std::isnan(want[Obs::Milling]));
    const std::vector<uint32_t> sizes = flockSizes(b.pos, p);
    EXPECT_EQ(double(sizes.size()), want[Obs::Flocks]);
    EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), 0u), 1500u);
    EXPECT_EQ(double(sizes.front()) / 1500, want[Obs::LargestFlockShare]);
  }
}

TEST(Observables, AHugeSparseWorldUsesCoarserCellsAndStillMatches) {
  // 400^3 cells at the rule radius: the observables' grid coarsens (a whole multiple of the
  // radius) and still finds every neighbour, nearest neighbour and flock.
  const float h = 1000;
  const SimParams p = boidParams(h);
  const GridSpec g = observablesGrid(p, 600);
  EXPECT_LE(double(g.numCells), double(1 << 21));
  EXPECT_GT(g.cellWidth, searchRadius(p));
  Bodies b = test::randomBodies(300, h, 1, 9);
  const Bodies near = test::randomBodies(300, 12, 1, 10);  // a dense clump in the middle
  for (size_t i = 0; i < near.size(); ++i) {
    b.pos.push_back(near.pos[i]), b.vel.push_back(near.vel[i]), b.id.push_back(uint32_t(300 + i));
  }
  ObserveRequest r;
  r.flocks = true;
  expectNear(observeBodies(b.pos, b.vel, p, r), bruteBoids(b, p, 10), observedColumns(ForceMode::Boids, true), 1e-9);
}

// A ball of boids (within 2 units of c, so all within the cohesion radius 5 of each other).
void addBlob(Bodies& b, Vec3 c, size_t n, uint64_t seed) {
  Rng rng(seed);
  for (size_t k = 0; k < n; ++k) {
    const size_t i = b.size();
    b.resize(i + 1);
    b.pos[i] = Vec4{c.x + float(rng.uniform(-1, 1)), c.y + float(rng.uniform(-1, 1)), c.z + float(rng.uniform(-1, 1)), 1};
    b.vel[i] = Vec4{float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), float(rng.uniform(-1, 1)), 0};
    b.id[i] = uint32_t(i);
  }
}

TEST(Observables, TwoDistantBlobsAreTwoFlocks) {
  Bodies b;
  addBlob(b, Vec3{-40, 0, 0}, 30, 1);
  addBlob(b, Vec3{40, 10, -5}, 20, 2);
  ObserveRequest r;
  r.flocks = true;
  const Observables o = observeBodies(b.pos, b.vel, boidParams(100), r);
  EXPECT_EQ(o[Obs::Flocks], 2);
  EXPECT_EQ(o[Obs::Flocks10to99], 2);
  EXPECT_DOUBLE_EQ(o[Obs::LargestFlockShare], 30.0 / 50);
}

TEST(Observables, ABlobCutByTheWrapIsTwoFlocks) {
  // Near the face x = 100 and across it at x = -100: adjacent through the wrap, but the rules do
  // not look across it (docs/design.md#the-boundary-rule), so the flock graph does not either.
  Bodies b;
  addBlob(b, Vec3{98.5f, 0, 0}, 10, 1);
  addBlob(b, Vec3{-98.5f, 0, 0}, 10, 2);
  ObserveRequest r;
  r.flocks = true;
  const Observables o = observeBodies(b.pos, b.vel, boidParams(100), r);
  EXPECT_EQ(o[Obs::Flocks], 2);
}

TEST(Observables, RigidRotationMillsAndTranslationDoesNot) {
  Bodies b;
  addBlob(b, Vec3{0, 0, 0}, 40, 5);
  Bodies t = b;
  for (size_t i = 0; i < b.size(); ++i) {
    // v = omega x (r - c) about z with the blob's own centre: milling |L| / sum |r||v| < 1 (3D
    // offsets have a z part) but large; a translation has L = 0 about the centre.
    double cx = 0, cy = 0;
    for (const Vec4& q : b.pos) cx += q.x / b.size(), cy += q.y / b.size();
    b.vel[i] = Vec4{-(b.pos[i].y - float(cy)), b.pos[i].x - float(cx), 0, 0};
    t.vel[i] = Vec4{1, 0, 0, 0};
  }
  ObserveRequest r;
  r.flocks = true;
  EXPECT_GT(observeBodies(b.pos, b.vel, boidParams(100), r)[Obs::Milling], 0.7);
  EXPECT_NEAR(observeBodies(t.pos, t.vel, boidParams(100), r)[Obs::Milling], 0.0, 1e-6);
}

TEST(Observables, NearestNeighbourBeyondTheRuleRadiusIsFound) {
  // Two boids 30 units apart (six cells of the observables' grid): each is the other's nearest.
  Bodies b;
  b.resize(2);
  b.pos = {Vec4{-15, 1, 2, 1}, Vec4{15, 1, 2, 1}};
  b.vel = {Vec4{1, 0, 0, 0}, Vec4{-1, 0, 0, 0}};
  b.id = {0, 1};
  const Observables o = observeBodies(b.pos, b.vel, boidParams(100), ObserveRequest{});
  EXPECT_DOUBLE_EQ(o[Obs::NearestDistance], 30.0);
  EXPECT_EQ(o[Obs::Polarization], 0.0);
  EXPECT_EQ(o[Obs::NeighboursCohesion], 0.0);
}

SimParams gravityParams(float eps) {
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  p.gravity.softening = eps;
  return p;
}

TEST(Observables, UniformSphereHasTheKnownPotential) {
  // W = -3 G M^2 / (5 R) for a uniform sphere; N points sampled from it give that times
  // (1 - 1/N) in expectation, with a spread of a few 1/sqrt(N).
  const size_t n = 4000;
  const double R = 2.0, M = 3.0;
  Rng rng(11);
  std::vector<Vec4> pos, vel(n, Vec4{0, 0, 0, 0});
  while (pos.size() < n) {
    const double x = rng.uniform(-1, 1), y = rng.uniform(-1, 1), z = rng.uniform(-1, 1);
    if (x * x + y * y + z * z < 1) pos.push_back(Vec4{float(R * x), float(R * y), float(R * z), float(M / n)});
  }
  SimParams p = gravityParams(1e-5f);
  p.gravity.G = 1;
  const Observables o = observeBodies(pos, vel, p, ObserveRequest{});
  const double want = -3.0 * M * M / (5 * R) * (1 - 1.0 / n);
  EXPECT_NEAR(o[Obs::Potential], want, 0.01 * std::fabs(want));
  EXPECT_DOUBLE_EQ(o[Obs::Kinetic], 0);
  // Lagrangian radii of a uniform sphere: R f^(1/3).
  EXPECT_NEAR(o[Obs::Lagrange50], R * std::cbrt(0.5), 0.03);
  EXPECT_NEAR(o[Obs::Lagrange90], R * std::cbrt(0.9), 0.03);
}

TEST(Observables, GravityMatchesBruteForce) {
  const Bodies b = test::randomBodies(800, 3, 0.5, 7);
  const SimParams p = gravityParams(0.05f);
  const Observables o = observeBodies(b.pos, b.vel, p, ObserveRequest{});
  double m = 0, k = 0, lz = 0, px = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const Vec4 q = b.pos[i], v = b.vel[i];
    m += q.w, k += 0.5 * q.w * (double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
    lz += q.w * (double(q.x) * v.y - double(q.y) * v.x);
    px += double(q.w) * v.x;
  }
  const double e = totalEnergy(b, p.gravity.G, p.gravity.softening);
  EXPECT_NEAR(o[Obs::Mass], m, 1e-9 * m);
  EXPECT_NEAR(o[Obs::Kinetic], k, 1e-9 * k);
  EXPECT_NEAR(o[Obs::TotalEnergy], e, 1e-9 * std::fabs(e));
  EXPECT_NEAR(o[Obs::VirialRatio], 2 * k / std::fabs(e - k), 1e-9);
  EXPECT_NEAR(o[Obs::AngularMomentumZ], lz, 1e-9 * std::max(1.0, std::fabs(lz)));
  EXPECT_NEAR(o[Obs::MomentumX], px, 1e-9 * std::max(1.0, std::fabs(px)));
  // Lagrangian radii by sorting in the test.
  const double cx = o[Obs::ComX], cy = o[Obs::ComY], cz = o[Obs::ComZ];
  std::vector<std::pair<double, double>> rm;
  for (const Vec4& q : b.pos)
    rm.push_back({std::sqrt((q.x - cx) * (q.x - cx) + (q.y - cy) * (q.y - cy) + (q.z - cz) * (q.z - cz)), q.w});
  std::sort(rm.begin(), rm.end());
  double cum = 0, r50 = 0;
  for (const auto& [r, w] : rm)
    if ((cum += w) >= 0.5 * m) {
      r50 = r;
      break;
    }
  EXPECT_NEAR(o[Obs::Lagrange50], r50, 1e-9);
  // Beyond the exact limit the potential is left empty, never approximated silently.
  ObserveRequest small;
  small.potentialMaxN = 100;
  const Observables s = observeBodies(b.pos, b.vel, p, small);
  EXPECT_TRUE(std::isnan(s[Obs::Potential]));
  EXPECT_TRUE(std::isnan(s[Obs::TotalEnergy]));
  EXPECT_FALSE(std::isnan(s[Obs::Kinetic]));
}

TEST(Observables, SeriesDriftsStartAtZeroAndTrackTheEngine) {
  core::ScenarioSpec spec;
  spec.name = "plummer";
  spec.n = 500;
  SimParams p = gravityParams(0.05f);
  p.pipeline = Pipeline::Naive;
  const Bodies b = makeScenario(spec, p).bodies;
  CpuEngine e(p);
  e.reset(b);
  ObservablesSeries series;
  const Observables first = series.add(e.observe(ObserveRequest{}), 0);
  EXPECT_EQ(first[Obs::EnergyDrift], 0);
  EXPECT_EQ(first[Obs::ComDrift], 0);
  e.step(50);
  const Observables later = series.add(e.observe(ObserveRequest{}), 50 * p.gravity.dt);
  EXPECT_LT(std::fabs(later[Obs::EnergyDrift]), 1e-2);
  EXPECT_LT(later[Obs::MomentumDrift], 1e-4);
  EXPECT_LT(later[Obs::ComDrift], 1e-4);
  const double e1 = totalEnergy(e.readBodies(), p.gravity.G, p.gravity.softening);
  EXPECT_NEAR(later[Obs::TotalEnergy], e1, 1e-9 * std::fabs(e1));
}

}  // namespace
}  // namespace murmur::core
