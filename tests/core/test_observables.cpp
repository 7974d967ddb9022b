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

struct D3 {
  double x, y, z;
};

// The offset from a to b in double: plain under the wrap boundary; under the periodic one each
// component less the nearest whole multiple of the world's width (the minimum image).
D3 offset(const Vec4& a, const Vec4& b, const SimParams& p) {
  D3 d{double(b.x) - a.x, double(b.y) - a.y, double(b.z) - a.z};
  if (p.boundary == Boundary::Periodic) {
    const double L = 2.0 * double(p.halfSize);
    for (double* c : {&d.x, &d.y, &d.z}) *c -= L * std::round(*c / L);
  }
  return d;
}

double norm(const D3& d) { return std::sqrt(d.x * d.x + d.y * d.y + d.z * d.z); }

// What bruteBoids saw of the flocks it measured the milling of: how many straddle a face (some
// boid's unwrapped position is not its own), and the widest along any axis once unwrapped.
struct BruteFlocks {
  int straddling = 0;
  double widest = 0;
};

SimParams boidParams(float h) {
  SimParams p = defaultParams();
  p.force = ForceMode::Boids;
  p.halfSize = h;
  return p;
}

// The group columns in double, written out: the centroid c of every boid, then per boid the unit
// offset from c and the unit velocity (0 where zero), their cross product, and (r - c) x v.
void bruteGroup(const Bodies& b, Observables& o) {
  const size_t n = b.size();
  double c[3] = {0, 0, 0};
  for (const Vec4& q : b.pos) c[0] += q.x, c[1] += q.y, c[2] += q.z;
  for (double& x : c) x /= double(n);
  double pol[3] = {0, 0, 0}, rot[3] = {0, 0, 0}, ang[3] = {0, 0, 0};
  const auto cross = [](const double* a, const double* v, double* acc) {
    acc[0] += a[1] * v[2] - a[2] * v[1], acc[1] += a[2] * v[0] - a[0] * v[2], acc[2] += a[0] * v[1] - a[1] * v[0];
  };
  for (size_t i = 0; i < n; ++i) {
    const double r[3] = {b.pos[i].x - c[0], b.pos[i].y - c[1], b.pos[i].z - c[2]};
    const double v[3] = {b.vel[i].x, b.vel[i].y, b.vel[i].z};
    const double rl = std::sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    const double vl = std::sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    double rh[3] = {0, 0, 0}, u[3] = {0, 0, 0};
    for (int k = 0; k < 3; ++k) {
      if (rl > 0) rh[k] = r[k] / rl;
      if (vl > 0) u[k] = v[k] / vl;
      pol[k] += u[k];
    }
    cross(rh, u, rot);
    cross(r, v, ang);
  }
  const auto len = [](const double* a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); };
  o[Obs::GroupPolarization] = len(pol) / double(n);
  o[Obs::GroupRotation] = len(rot) / double(n);
  o[Obs::GroupAngularMomentum] = len(ang) / double(n);
}

// Everything the boids columns say, by all pairs in double and a breadth-first search. Under the
// periodic boundary the distances are the minimum image's, and each flock is unwrapped along the
// search (a boid placed at the minimum-image offset from the boid that reached it, which holds for
// flocks narrower than half the world) and measured about the mean of its unwrapped positions.
// The group columns (bruteGroup) under a boundary that leaves positions unwrapped only.
Observables bruteBoids(const Bodies& b, const SimParams& p, uint32_t minSize, BruteFlocks* seen = nullptr) {
  const size_t n = b.size();
  Observables o;
  double ux = 0, uy = 0, uz = 0, sp = 0, nn = 0, c1 = 0, c2 = 0, c3 = 0;
  std::vector<std::vector<uint32_t>> adj(n);
  for (size_t i = 0; i < n; ++i) {
    const Vec4 v = b.vel[i];
    const double s = std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
    sp += s;
    if (s > 0) ux += v.x / s, uy += v.y / s, uz += v.z / s;  // a boid at rest has no heading
    double best = INFINITY;
    for (size_t j = 0; j < n; ++j) {
      if (j == i) continue;
      const double d = norm(offset(b.pos[i], b.pos[j], p));
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
  std::vector<D3> u(n);  // unwrapped positions
  for (size_t s = 0; s < n; ++s) {
    if (comp[s] >= 0) continue;
    flocks.emplace_back();
    std::vector<uint32_t> stack{uint32_t(s)};
    comp[s] = int(flocks.size() - 1);
    u[s] = D3{b.pos[s].x, b.pos[s].y, b.pos[s].z};
    while (!stack.empty()) {
      const uint32_t i = stack.back();
      stack.pop_back();
      flocks.back().push_back(i);
      for (uint32_t j : adj[i])
        if (comp[j] < 0) {
          comp[j] = comp[s], stack.push_back(j);
          const D3 d = offset(b.pos[i], b.pos[j], p);
          u[j] = D3{u[i].x + d.x, u[i].y + d.y, u[i].z + d.z};
        }
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
    for (uint32_t i : f) cx += u[i].x, cy += u[i].y, cz += u[i].z;
    cx /= f.size(), cy /= f.size(), cz /= f.size();
    if (seen) {
      D3 lo = u[f[0]], hi = u[f[0]];
      bool moved = false;
      for (uint32_t i : f) {
        lo = D3{std::min(lo.x, u[i].x), std::min(lo.y, u[i].y), std::min(lo.z, u[i].z)};
        hi = D3{std::max(hi.x, u[i].x), std::max(hi.y, u[i].y), std::max(hi.z, u[i].z)};
        moved = moved || u[i].x != b.pos[i].x || u[i].y != b.pos[i].y || u[i].z != b.pos[i].z;
      }
      seen->straddling += moved;
      seen->widest = std::max({seen->widest, hi.x - lo.x, hi.y - lo.y, hi.z - lo.z});
    }
    double lx = 0, ly = 0, lz = 0, den = 0;
    for (uint32_t i : f) {
      const double dx = u[i].x - cx, dy = u[i].y - cy, dz = u[i].z - cz;
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
  if (p.boundary != Boundary::Wrap && p.boundary != Boundary::Periodic) bruteGroup(b, o);
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
  EXPECT_EQ(observedColumns(ForceMode::Boids, false).size(), 9u);
  EXPECT_EQ(observedColumns(ForceMode::Boids, true).size(), 17u);
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

// The periodic boundary (--boundary periodic): distances, neighbours, the flock graph and the
// flock centres by the minimum image (docs/observables.md#the-periodic-boundary).

SimParams periodicParams(float h, int dims = 3) {
  SimParams p = boidParams(h);
  p.boundary = Boundary::Periodic;
  p.dims = dims;
  return p;
}

SimParams wrapOf(SimParams p) {
  p.boundary = Boundary::Wrap;
  return p;
}

// Uniform random boids in the world of p (in its plane where p.dims is 2).
Bodies randomBoids(size_t n, const SimParams& p, uint64_t seed) {
  Bodies b = test::randomBodies(n, p.halfSize, 1, seed);
  for (size_t i = 0; i < n; ++i) {
    b.pos[i].w = 1;
    if (p.dims == 2) b.pos[i].z = 0, b.vel[i].z = 0;
  }
  return b;
}

void addBoid(Bodies& b, Vec3 at, Vec3 v) {
  const size_t i = b.size();
  b.resize(i + 1);
  b.pos[i] = make4(at, 1);
  b.vel[i] = make4(v, 0);
  b.id[i] = uint32_t(i);
}

// x on a grid of 1/256: translations by whole numbers and the shift by the world's width are then
// exact in float, so a flock moved across a face keeps its offsets bit for bit.
float dyadic(double x) { return float(std::round(x * 256.0) / 256.0); }

// b moved by t, each coordinate wrapped back into [-h, h) (by the world's width, exactly).
Bodies moved(const Bodies& b, Vec3 t, float h) {
  Bodies out = b;
  const auto wrap = [h](float x) { return x >= h ? x - 2 * h : (x < -h ? x + 2 * h : x); };
  for (Vec4& q : out.pos) q = Vec4{wrap(q.x + t.x), wrap(q.y + t.y), wrap(q.z + t.z), q.w};
  return out;
}

TEST(Observables, PeriodicMatchesBruteForceOnRandomStates) {
  ObserveRequest r;
  r.flocks = true;
  r.millingMinSize = 5;
  // Sparse (about 1.2 neighbours a boid: flocks of a few radii, many cut by a face, every one
  // narrower than half the world, so the brute force's unwrapping along its search is the
  // flock's): every column, milling included. In 3D and in the plane.
  for (int dims : {3, 2}) {
    for (uint64_t seed : {1u, 2u}) {
      const SimParams p = periodicParams(dims == 3 ? 60.0f : 160.0f, dims);
      const Bodies b = randomBoids(dims == 3 ? 4000 : 2000, p, seed);
      BruteFlocks seen;
      const Observables want = bruteBoids(b, p, 5, &seen);
      const Observables got = observeBodies(b.pos, b.vel, p, r);
      SCOPED_TRACE("sparse, dims " + std::to_string(dims) + ", seed " + std::to_string(seed));
      expectNear(got, want, observedColumns(ForceMode::Boids, true), 1e-9);
      EXPECT_GT(seen.straddling, 0) << "some measured flock should straddle a face";
      EXPECT_LT(seen.widest, p.halfSize);
      EXPECT_FALSE(std::isnan(want[Obs::Milling]));
      // The same state under wrap differs: pairs across the faces are gone.
      const Observables plain = observeBodies(b.pos, b.vel, wrapOf(p), r);
      EXPECT_LT(plain[Obs::NeighboursCohesion], got[Obs::NeighboursCohesion]);
      EXPECT_GT(plain[Obs::Flocks], got[Obs::Flocks]);
    }
  }
  // Dense (about 6 neighbours: a flock spanning the torus, whose unwrapping the brute force
  // cannot follow): every column but milling.
  for (int dims : {3, 2}) {
    const SimParams p = periodicParams(dims == 3 ? 25.0f : 60.0f, dims);
    const Bodies b = randomBoids(1500, p, 7);
    const Observables want = bruteBoids(b, p, 5);
    std::vector<Obs> cols;
    for (Obs c : observedColumns(ForceMode::Boids, true))
      if (c != Obs::Milling) cols.push_back(c);
    SCOPED_TRACE("dense, dims " + std::to_string(dims));
    expectNear(observeBodies(b.pos, b.vel, p, r), want, cols, 1e-9);
    EXPECT_GT(want[Obs::LargestFlockShare], 0.5);
  }
}

TEST(Observables, PeriodicTwoBoidsThroughAFaceAreNeighboursAndOneFlock) {
  // Two boids 1 apart through a face (99 apart inside the world): under periodic each is the
  // other's nearest neighbour at distance 1, a neighbour within every rule radius, and they are
  // one flock; under wrap they are 99 apart, no neighbours and two flocks. Through the x, y and z
  // faces, through a corner (1 along each axis), and in the plane.
  struct Case {
    int dims;
    Vec3 a, b;
    double distance;
  };
  const float h = 50;
  const Case cases[] = {
      {3, {49.5f, 3, -7}, {-49.5f, 3, -7}, 1.0},
      {3, {2, -49.5f, 11}, {2, 49.5f, 11}, 1.0},
      {3, {-20, 5, 49.5f}, {-20, 5, -49.5f}, 1.0},
      {3, {49.5f, 49.5f, 49.5f}, {-49.5f, -49.5f, -49.5f}, std::sqrt(3.0)},
      {2, {49.5f, 8, 0}, {-49.5f, 8, 0}, 1.0},
      {2, {-13, -49.5f, 0}, {-13, 49.5f, 0}, 1.0},
  };
  ObserveRequest r;
  r.flocks = true;
  r.millingMinSize = 2;
  for (const Case& c : cases) {
    Bodies b;
    addBoid(b, c.a, Vec3{1, 0, 0});
    addBoid(b, c.b, Vec3{0, 1, 0});
    const SimParams p = periodicParams(h, c.dims);
    // On the CPU engine, as a run samples it.
    CpuEngine e(p);
    e.reset(b);
    const Observables o = e.observe(r);
    SCOPED_TRACE("dims " + std::to_string(c.dims) + " a.x " + std::to_string(c.a.x));
    EXPECT_DOUBLE_EQ(o[Obs::NearestDistance], c.distance);
    EXPECT_EQ(o[Obs::NeighboursCohesion], 1);
    EXPECT_EQ(o[Obs::NeighboursSeparation], 1);
    EXPECT_EQ(o[Obs::NeighboursAlignment], 1);
    EXPECT_EQ(o[Obs::Flocks], 1);
    EXPECT_EQ(o[Obs::Flocks2to9], 1);
    EXPECT_EQ(o[Obs::LargestFlockShare], 1);
    EXPECT_FALSE(std::isnan(o[Obs::Milling]));
    EXPECT_EQ(flockSizes(b.pos, p), std::vector<uint32_t>({2}));
    const Observables w = observeBodies(b.pos, b.vel, wrapOf(p), r);
    EXPECT_DOUBLE_EQ(w[Obs::NearestDistance], 99.0 * c.distance);
    EXPECT_EQ(w[Obs::NeighboursCohesion], 0);
    EXPECT_EQ(w[Obs::Flocks], 2);
    EXPECT_EQ(w[Obs::Flocks1], 2);
    EXPECT_TRUE(std::isnan(w[Obs::Milling]));
    EXPECT_EQ(flockSizes(b.pos, wrapOf(p)), std::vector<uint32_t>({1, 1}));
  }
}

TEST(Observables, PeriodicNearestNeighbourFarThroughTheFacesIsFound) {
  // Beyond the rule radius, where the search's shells wrap around the faces: 75 apart inside the
  // world, 25 through the x face.
  Bodies two;
  addBoid(two, Vec3{-30, 1, 2}, Vec3{1, 0, 0});
  addBoid(two, Vec3{45, 1, 2}, Vec3{-1, 0, 0});
  EXPECT_DOUBLE_EQ(observeBodies(two.pos, two.vel, periodicParams(50), ObserveRequest{})[Obs::NearestDistance], 25.0);
  EXPECT_DOUBLE_EQ(observeBodies(two.pos, two.vel, boidParams(50), ObserveRequest{})[Obs::NearestDistance], 75.0);
  // a and b 4 apart along each axis through a corner; c in the middle, 48 from each along each
  // axis, whose nearest lies as far as the search reaches.
  Bodies three;
  addBoid(three, Vec3{-48, -48, -48}, Vec3{1, 0, 0});
  addBoid(three, Vec3{48, 48, 48}, Vec3{1, 0, 0});
  addBoid(three, Vec3{0, 0, 0}, Vec3{1, 0, 0});
  const double ab = std::sqrt(48.0), c = std::sqrt(3.0 * 48 * 48);
  EXPECT_NEAR(observeBodies(three.pos, three.vel, periodicParams(50), ObserveRequest{})[Obs::NearestDistance],
              (2 * ab + c) / 3, 1e-12);
  // In the plane, in a world whose cells do not divide it at the rule radius (the observables'
  // grid then widens its cells to a whole number across): 29.6 apart inside, 14.3 through the y
  // face.
  Bodies plane;
  addBoid(plane, Vec3{3, -21.6f, 0}, Vec3{1, 0, 0});
  addBoid(plane, Vec3{3, 8.0f, 0}, Vec3{1, 0, 0});
  const SimParams p = periodicParams(21.95f, 2);
  EXPECT_NEAR(observeBodies(plane.pos, plane.vel, p, ObserveRequest{})[Obs::NearestDistance], 14.3, 1e-5);
}

// A flock moved across a face or a corner measures as it does in the middle of the world: a ring
// milling in its plane (milling 1) and a lopsided blob spinning about an axis away from its
// centre (so that the centre must be the unwrapped flock's mean: the circular mean alone is not).
TEST(Observables, PeriodicFlockStraddlingACornerMeasuresAsInTheMiddle) {
  const float h = 50;
  ObserveRequest r;
  r.flocks = true;
  for (int dims : {3, 2}) {
    Bodies ring;
    for (int k = 0; k < 40; ++k) {
      const double a = 2 * 3.14159265358979 * k / 40;
      addBoid(ring, Vec3{dyadic(4 * std::cos(a)), dyadic(4 * std::sin(a)), 0},
              Vec3{float(-std::sin(a)), float(std::cos(a)), 0});
    }
    Bodies blob;
    Rng rng(5 + dims);
    for (int k = 0; k < 80; ++k) {
      const double x = k < 60 ? rng.uniform(-3, 3) : rng.uniform(3, 7), y = rng.uniform(-2, 2);
      const double z = dims == 2 ? 0 : rng.uniform(-1, 1);
      const Vec3 at{dyadic(x), dyadic(y), dyadic(z)};
      // About the z axis through (1, -1): v = omega x (r - (1, -1, 0)), plus a little noise.
      addBoid(blob, at,
              Vec3{float(-(at.y + 1) + 0.1 * rng.uniform(-1, 1)), float(at.x - 1 + 0.1 * rng.uniform(-1, 1)),
                   dims == 2 ? 0.0f : float(0.1 * rng.uniform(-1, 1))});
    }
    const SimParams p = periodicParams(h, dims);
    const Vec3 corner{h, h, dims == 2 ? 0.0f : h}, face{h - 2, 0, 0};
    for (const Bodies* flock : {&ring, &blob}) {
      const std::string what = std::string(flock == &ring ? "ring" : "blob") + ", dims " + std::to_string(dims);
      SCOPED_TRACE(what);
      const Observables middle = observeBodies(flock->pos, flock->vel, p, r);
      EXPECT_EQ(middle[Obs::Flocks], 1);
      EXPECT_GT(middle[Obs::Milling], flock == &ring ? 0.999 : 0.3);
      // In the middle the periodic and wrap boundaries agree (no pair near a face).
      expectNear(observeBodies(flock->pos, flock->vel, wrapOf(p), r), middle, observedColumns(ForceMode::Boids, true),
                 1e-12);
      for (const Vec3& t : {corner, face}) {
        const Bodies there = moved(*flock, t, h);
        expectNear(observeBodies(there.pos, there.vel, p, r), middle, observedColumns(ForceMode::Boids, true), 1e-12);
        // Under wrap the faces cut it.
        EXPECT_GT(observeBodies(there.pos, there.vel, wrapOf(p), r)[Obs::Flocks], 1);
      }
    }
  }
}

// Polarization and the mean speed read velocities only: the same under either boundary and
// wherever the boids are.
TEST(Observables, PolarizationDoesNotDependOnTheBoundary) {
  const SimParams p = periodicParams(20);
  Bodies b = randomBoids(800, p, 4);
  for (size_t i = 0; i < b.size(); i += 3) b.vel[i] = Vec4{0.5f, 0.25f, -1, 0};
  const Observables per = observeBodies(b.pos, b.vel, p, ObserveRequest{});
  const Observables wrap = observeBodies(b.pos, b.vel, wrapOf(p), ObserveRequest{});
  const Observables away = observeBodies(moved(b, Vec3{13, -7, 29}, p.halfSize).pos, b.vel, p, ObserveRequest{});
  // Equal but for the order of the parallel sums.
  EXPECT_NEAR(per[Obs::Polarization], wrap[Obs::Polarization], 1e-12);
  EXPECT_NEAR(per[Obs::MeanSpeed], wrap[Obs::MeanSpeed], 1e-12);
  EXPECT_NEAR(away[Obs::Polarization], per[Obs::Polarization], 1e-12);
  EXPECT_GT(per[Obs::Polarization], 0.3);
}

// The group columns (Couzin et al. 2002's p_group and m_group, and the angular momentum per boid)
// measure all the boids about their centroid: under walls (Boundary::Reflect), never where the
// world wraps (docs/observables.md).

SimParams wallParams(float h, int dims = 3) {
  SimParams p = boidParams(h);
  p.boundary = Boundary::Reflect;
  p.dims = dims;
  return p;
}

// n boids evenly on a circle of radius R about c in the plane of the orthonormal e1 and e2, each
// moving along it (from e1 towards e2) at speed s: a rigid mill.
Bodies mill(int n, Vec3 c, double R, double s, Vec3 e1, Vec3 e2) {
  Bodies b;
  for (int k = 0; k < n; ++k) {
    const double a = 2 * 3.14159265358979323846 * k / n, ca = std::cos(a), sa = std::sin(a);
    addBoid(b, Vec3{float(c.x + R * (ca * e1.x + sa * e2.x)), float(c.y + R * (ca * e1.y + sa * e2.y)),
                    float(c.z + R * (ca * e1.z + sa * e2.z))},
            Vec3{float(s * (ca * e2.x - sa * e1.x)), float(s * (ca * e2.y - sa * e1.y)),
                 float(s * (ca * e2.z - sa * e1.z))});
  }
  return b;
}

TEST(Observables, GroupPredicateLeavesOutTheWrappingBoundaries) {
  EXPECT_FALSE(groupObservablesApply(Boundary::Wrap));
  EXPECT_FALSE(groupObservablesApply(Boundary::Periodic));
  EXPECT_TRUE(groupObservablesApply(Boundary::Reflect));
  // The columns are in every boids run's CSV (empty where they do not apply), flocks or not.
  for (bool flocks : {false, true}) {
    const std::vector<Obs> cols = observedColumns(ForceMode::Boids, flocks);
    for (Obs c : {Obs::GroupPolarization, Obs::GroupRotation, Obs::GroupAngularMomentum})
      EXPECT_NE(std::find(cols.begin(), cols.end(), c), cols.end()) << observableDesc(c).column;
  }
}

TEST(Observables, ARigidMillHasGroupRotationOne) {
  // In the xy plane (cube and plane) and in the xz plane, about a centre off the origin: every
  // unit offset is perpendicular to its unit velocity, all turning the same way (m_group 1); the
  // headings cancel (p_group 0); the angular momentum per boid about the centroid is R |v|.
  struct Case {
    int dims;
    Vec3 c, e1, e2;
  };
  const Case cases[] = {{3, {3, -2, 4}, {1, 0, 0}, {0, 1, 0}},
                        {2, {3, -2, 0}, {1, 0, 0}, {0, 1, 0}},
                        {3, {-5, 1, 2}, {0, 0, 1}, {1, 0, 0}}};
  const double R = 10, s = 1.5;
  for (const Case& k : cases) {
    const Bodies b = mill(64, k.c, R, s, k.e1, k.e2);
    for (bool flocks : {false, true}) {
      ObserveRequest r;
      r.flocks = flocks;
      const Observables o = observeBodies(b.pos, b.vel, wallParams(50, k.dims), r);
      SCOPED_TRACE("dims " + std::to_string(k.dims) + ", e1.z " + std::to_string(k.e1.z) +
                   (flocks ? ", flocks" : ""));
      EXPECT_NEAR(o[Obs::GroupRotation], 1.0, 1e-9);
      EXPECT_NEAR(o[Obs::GroupPolarization], 0.0, 1e-6);
      EXPECT_EQ(o[Obs::GroupPolarization], o[Obs::Polarization]);
      EXPECT_NEAR(o[Obs::GroupAngularMomentum], R * s, 1e-5 * R * s);
    }
  }
  // Turning the other way: the same magnitudes.
  const Bodies back = mill(64, Vec3{3, -2, 4}, R, s, Vec3{0, 1, 0}, Vec3{1, 0, 0});
  const Observables o = observeBodies(back.pos, back.vel, wallParams(50), ObserveRequest{});
  EXPECT_NEAR(o[Obs::GroupRotation], 1.0, 1e-9);
  EXPECT_NEAR(o[Obs::GroupAngularMomentum], R * s, 1e-5 * R * s);
}

TEST(Observables, AGroupMovingAlikeHasNoGroupRotation) {
  // A lattice symmetric about its centre (which holds a boid: its offset from the centroid is 0,
  // and counts as 0), every boid with the same velocity: p_group 1; the unit offsets cancel in
  // pairs, so m_group is 0, and so is the angular momentum.
  for (int dims : {3, 2}) {
    Bodies b;
    const Vec3 c{7, -3, dims == 2 ? 0.0f : 2.0f}, v{0.3f, -0.4f, dims == 2 ? 0.0f : 1.2f};
    const int zr = dims == 2 ? 0 : 2;
    for (int i = -2; i <= 2; ++i)
      for (int j = -2; j <= 2; ++j)
        for (int k = -zr; k <= zr; ++k)
          addBoid(b, Vec3{c.x + 1.5f * float(i), c.y + 1.25f * float(j), c.z + 1.75f * float(k)}, v);
    const Observables o = observeBodies(b.pos, b.vel, wallParams(50, dims), ObserveRequest{});
    SCOPED_TRACE("dims " + std::to_string(dims));
    EXPECT_NEAR(o[Obs::GroupPolarization], 1.0, 1e-12);
    EXPECT_NEAR(o[Obs::GroupRotation], 0.0, 1e-12);
    EXPECT_NEAR(o[Obs::GroupAngularMomentum], 0.0, 1e-12);
    // Off the lattice's symmetry (one boid moved out) the unit offsets no longer cancel: m_group
    // is then the brute force's, above 0, while the angular momentum of a common velocity stays 0.
    b.pos[0].x -= 6;
    const Observables off = observeBodies(b.pos, b.vel, wallParams(50, dims), ObserveRequest{});
    Observables want;
    bruteGroup(b, want);
    EXPECT_GT(off[Obs::GroupRotation], 1e-3);
    EXPECT_NEAR(off[Obs::GroupRotation], want[Obs::GroupRotation], 1e-12);
    EXPECT_NEAR(off[Obs::GroupAngularMomentum], 0.0, 1e-12);
  }
}

// Random states, some swirling about a point off the centre, in the cube and the plane: every
// boids column (the group ones included) against the brute force in double.
TEST(Observables, GroupColumnsMatchBruteForceUnderWalls) {
  ObserveRequest r;
  r.flocks = true;
  r.millingMinSize = 5;
  for (int dims : {3, 2})
    for (uint64_t seed : {1u, 2u, 3u}) {
      const SimParams p = wallParams(dims == 3 ? 25.0f : 60.0f, dims);
      Bodies b = randomBoids(1500, p, seed);
      const double swirl = seed == 1 ? 0.0 : 0.6 * double(seed - 1) / p.halfSize;
      for (size_t i = 0; i < b.size(); ++i) {
        b.vel[i].x += float(-swirl * (b.pos[i].y - 4.0));
        b.vel[i].y += float(swirl * (b.pos[i].x + 3.0));
      }
      if (seed == 3) b.vel[5] = Vec4{0, 0, 0, 0};  // a boid at rest: its unit velocity is 0
      const Observables want = bruteBoids(b, p, 5);
      SCOPED_TRACE("dims " + std::to_string(dims) + ", seed " + std::to_string(seed));
      expectNear(observeBodies(b.pos, b.vel, p, r), want, observedColumns(ForceMode::Boids, true), 1e-9);
      expectNear(observeBodies(b.pos, b.vel, p, ObserveRequest{}), want, observedColumns(ForceMode::Boids, false),
                 1e-9);
      for (Obs c : {Obs::GroupPolarization, Obs::GroupRotation, Obs::GroupAngularMomentum})
        EXPECT_FALSE(std::isnan(want[c])) << observableDesc(c).column;
      if (seed > 1) {
        EXPECT_GT(want[Obs::GroupRotation], 0.2);
      }
    }
}

TEST(Observables, GroupColumnsAreEmptyWhereTheWorldWraps) {
  const Bodies b = mill(64, Vec3{3, -2, 4}, 10, 1.5, Vec3{1, 0, 0}, Vec3{0, 1, 0});
  for (bool flocks : {false, true}) {
    ObserveRequest r;
    r.flocks = flocks;
    for (Boundary k : {Boundary::Wrap, Boundary::Periodic, Boundary::Reflect}) {
      SimParams p = wallParams(50);
      p.boundary = k;
      // As a run samples it, on the CPU engine.
      CpuEngine e(p);
      e.reset(b);
      const Observables o = e.observe(r);
      SCOPED_TRACE(std::string(toString(k)) + (flocks ? ", flocks" : ""));
      const bool applies = k == Boundary::Reflect;
      for (Obs c : {Obs::GroupPolarization, Obs::GroupRotation, Obs::GroupAngularMomentum})
        EXPECT_EQ(o.has(c), applies) << observableDesc(c).column;
      EXPECT_TRUE(o.has(Obs::Polarization));  // the other columns stay
      if (applies) {
        EXPECT_NEAR(o[Obs::GroupRotation], 1.0, 1e-9);
      }
    }
  }
}

TEST(Observables, PeriodicGridHasWholeCellsAcrossTheWorld) {
  for (int dims : {3, 2})
    for (float h : {50.0f, 37.3f, 12.6f, 21.95f, 1000.0f}) {
      const SimParams p = periodicParams(h, dims);
      const GridSpec g = observablesGrid(p, 600);
      SCOPED_TRACE("h " + std::to_string(h) + ", dims " + std::to_string(dims));
      EXPECT_GE(g.cellWidth, searchRadius(p) * (1 - 1e-6f));
      EXPECT_NEAR(double(g.dims.x) * g.cellWidth, 2.0 * h, 1e-6 * h);
      EXPECT_EQ(g.dims.y, g.dims.x);
      EXPECT_EQ(g.dims.z, dims == 2 ? 1 : g.dims.x);
      EXPECT_LE(double(g.numCells), std::max(4.0 * 600, double(1 << 21)));
      // The wrap boundary's grid is the boids grid at a whole multiple of the radius.
      const GridSpec w = observablesGrid(wrapOf(p), 600);
      EXPECT_EQ(std::fmod(w.cellWidth, searchRadius(p)), 0.0f);
    }
}

TEST(Observables, PeriodicHugeSparseWorldUsesCoarserCellsAndStillMatches) {
  // A sparse world and a dense clump around the corner: the coarse cells wrap like the fine ones.
  const float h = 1000;
  const SimParams p = periodicParams(h);
  EXPECT_GT(observablesGrid(p, 600).cellWidth, 2 * searchRadius(p));
  Bodies b = randomBoids(300, p, 9);
  const Bodies near = moved(test::randomBodies(300, 12, 1, 10), Vec3{h, h, h}, h);
  for (size_t i = 0; i < near.size(); ++i) addBoid(b, xyz(near.pos[i]), xyz(near.vel[i]));
  ObserveRequest r;
  r.flocks = true;
  BruteFlocks seen;
  const Observables want = bruteBoids(b, p, 10, &seen);
  expectNear(observeBodies(b.pos, b.vel, p, r), want, observedColumns(ForceMode::Boids, true), 1e-9);
  EXPECT_EQ(want[Obs::Flocks100to999], 1);
  EXPECT_GT(seen.straddling, 0);
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
