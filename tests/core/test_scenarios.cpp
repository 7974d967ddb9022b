#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <utility>

#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/metrics.h"
#include "core/rng.h"
#include "core/scenarios.h"

using namespace murmur::core;

namespace {
// The scenario's bodies; p takes the world the scenario was built for, as every caller does.
Bodies make(const std::string& name, size_t n, uint64_t seed, SimParams& p) {
  ScenarioSpec s;
  s.name = name;
  s.n = n;
  s.seed = seed;
  Scenario sc = makeScenario(s, p);
  p.halfSize = sc.halfSize;
  return std::move(sc.bodies);
}
}  // namespace

TEST(Scenarios, CountsIdsAndDeterminism) {
  for (const std::string& name : scenarioNames()) {
    for (size_t n : {1ul, 2ul, 1000ul, 1001ul}) {
      SimParams p = defaultParams();
      const Bodies a = make(name, n, 42, p);
      ASSERT_EQ(a.size(), n) << name;
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(a.id[i], i);
        ASSERT_TRUE(std::isfinite(a.pos[i].x) && std::isfinite(a.vel[i].z)) << name;
        ASSERT_GE(a.pos[i].w, 0.0f);
      }
      SimParams q = defaultParams();
      EXPECT_EQ(stateChecksum(a), stateChecksum(make(name, n, 42, q))) << name << " same seed";
      if (n > 1) {
        EXPECT_NE(stateChecksum(a), stateChecksum(make(name, n, 43, q))) << name << " other seed";
      }
    }
  }
}

// A jump of k draws lands where k calls of next() do, for jumps below and above the table's
// threshold and across its powers of two; the next values then agree.
TEST(Rng, AdvanceEqualsStepping) {
  for (uint64_t k : {0ull, 1ull, 5ull, 255ull, 256ull, 257ull, 1000ull, 65537ull, 1234567ull}) {
    Rng stepped(42), jumped(42);
    for (uint64_t i = 0; i < k; ++i) stepped.next();
    jumped.advance(k);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(stepped.next(), jumped.next()) << "k " << k;
  }
  // Two jumps add up.
  Rng once(7), twice(7);
  once.advance(3000000);
  twice.advance(1000000);
  twice.advance(2000000);
  EXPECT_EQ(once.next(), twice.next());
}

// Over ranks each makes the bodies of its run of ids alone; together they are the scenario made
// whole, bit for bit, in 3D and in the plane, at rest (uniform) and moving (dense).
TEST(Scenarios, SharesMadeAloneAreTheWholeScenario) {
  for (const char* name : {"uniform", "dense"}) {
    for (int dims : {3, 2}) {
      SimParams p = defaultParams();
      p.dims = dims;
      ScenarioSpec spec;
      spec.name = name;
      spec.n = 10007;
      spec.seed = 3;
      const Scenario whole = makeScenario(spec, p);
      for (size_t parts : {1u, 2u, 3u, 7u}) {
        Bodies joined;
        float halfSize = 0;
        for (size_t r = 0; r < parts; ++r) {
          const size_t first = spec.n * r / parts, last = spec.n * (r + 1) / parts;
          const Scenario share = makeScenarioShare(spec, p, first, last);
          halfSize = share.halfSize;
          ASSERT_EQ(share.bodies.size(), last - first);
          joined.pos.insert(joined.pos.end(), share.bodies.pos.begin(), share.bodies.pos.end());
          joined.vel.insert(joined.vel.end(), share.bodies.vel.begin(), share.bodies.vel.end());
          joined.id.insert(joined.id.end(), share.bodies.id.begin(), share.bodies.id.end());
        }
        const std::string what = std::string(name) + " dims " + std::to_string(dims) + " in " + std::to_string(parts);
        EXPECT_EQ(halfSize, whole.halfSize) << what;
        EXPECT_EQ(stateChecksum(joined), stateChecksum(whole.bodies)) << what;
        EXPECT_EQ(joined.id, whole.bodies.id) << what;
      }
    }
  }
  ScenarioSpec plummer;
  plummer.name = "plummer";
  plummer.n = 100;
  EXPECT_FALSE(scenarioMakesShares("plummer"));
  EXPECT_THROW(makeScenarioShare(plummer, defaultParams(), 0, 50), std::invalid_argument);
  ScenarioSpec dense;
  dense.name = "dense";
  dense.n = 100;
  EXPECT_THROW(makeScenarioShare(dense, defaultParams(), 50, 101), std::invalid_argument);
}

TEST(Scenarios, UniformFillsTheWorldAtRest) {
  SimParams p = defaultParams();
  const Bodies b = make("uniform", 20000, 1, p);
  double mean = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    for (float c : {b.pos[i].x, b.pos[i].y, b.pos[i].z}) {
      ASSERT_GE(c, -100.0f);
      ASSERT_LT(c, 100.0f);
    }
    ASSERT_EQ(b.vel[i].x, 0.0f);
    mean += b.pos[i].x;
  }
  EXPECT_NEAR(mean / b.size(), 0.0, 2.0);
}

TEST(Scenarios, DenseKeepsNeighboursPerBoidFixed) {
  for (size_t n : {5000ul, 40000ul}) {
    SimParams p = defaultParams();
    const Bodies b = make("dense", n, 3, p);
    CpuEngine e(p);
    e.reset(b);
    const NeighbourStats st = e.neighbourStats();
    // 8 expected in the open; boids near faces see fewer (no search across the boundary).
    EXPECT_GT(st.meanNeighbours, 5.5) << n;
    EXPECT_LT(st.meanNeighbours, 8.5) << n;
    for (const Vec4& q : b.pos) ASSERT_LT(std::fabs(q.x), p.halfSize + 1e-3f);
  }
  SimParams small = defaultParams(), large = defaultParams();
  make("dense", 5000, 1, small);
  make("dense", 40000, 1, large);
  EXPECT_NEAR(large.halfSize / small.halfSize, 2.0, 1e-3);  // 8x bodies, 2x side
}

TEST(Scenarios, PlummerIsCentredAndNearVirialEquilibrium) {
  SimParams p = defaultParams();
  const Bodies b = make("plummer", 4000, 7, p);
  EXPECT_NEAR(totalMass(b), 1.0, 1e-4);
  const Vec3d mom = totalMomentum(b);
  EXPECT_NEAR(mom.x, 0.0, 1e-5);
  double kinetic = 0;
  for (size_t i = 0; i < b.size(); ++i) kinetic += 0.5 * b.pos[i].w * dot(xyz(b.vel[i]), xyz(b.vel[i]));
  const double potential = totalEnergy(b, 1.0, 0.0) - kinetic;
  const double virial = 2.0 * kinetic / -potential;
  EXPECT_GT(virial, 0.85);
  EXPECT_LT(virial, 1.15);
}

TEST(Scenarios, GalaxiesAreTwoRotatingDisksOnACollisionCourse) {
  SimParams p = defaultParams();
  const size_t n = 10000;
  const Bodies b = make("galaxies", n, 1, p);
  EXPECT_NEAR(totalMass(b), 2.0 * (1.0 + kGalaxyHaloToLuminous) * kGalaxyLuminousMass, 1e-3);
  // Centres of the two halves sit apart and approach each other.
  Vec3d c[2], v[2];
  for (int g = 0; g < 2; ++g) {
    double m = 0;
    for (size_t i = g * n / 2; i < (g + 1) * n / 2; ++i) {
      const double w = b.pos[i].w;
      m += w;
      c[g].x += w * b.pos[i].x;
      v[g].x += w * b.vel[i].x;
    }
    c[g].x /= m;
    v[g].x /= m;
  }
  EXPECT_LT(c[0].x, -3.0);
  EXPECT_GT(c[1].x, 3.0);
  EXPECT_GT(v[0].x, 0.0);
  EXPECT_LT(v[1].x, 0.0);
  // Disk bodies of the first galaxy rotate: angular momentum about z is clearly non-zero.
  double lz = 0;
  const GalaxyLayout g = galaxyLayout(n / 2);
  for (size_t i = g.halo + g.bulge; i < n / 2; ++i) {
    const double x = b.pos[i].x - c[0].x, y = b.pos[i].y;
    lz += x * (b.vel[i].y) - y * (b.vel[i].x - v[0].x);
  }
  EXPECT_GT(std::fabs(lz) / (n / 2), 0.1);
}

// The disks as generated: the first lies in the xy plane, the second is tilted by 1 rad about x, and
// each is equally thin everywhere. A shadowed variable once left the second disk untilted and sheared
// the first (its thickness grew from 0.06 to 0.22 with |y|); this catches both.
TEST(Scenarios, GalaxyDisksAreThinAndTiltedAsSpecified) {
  SimParams p = defaultParams();
  const size_t n = 40000, half = n / 2;
  const Bodies b = make("galaxies", n, 3, p);
  const double tilt[2] = {0.0, 1.0};
  for (int g = 0; g < 2; ++g) {
    const size_t begin = g * half, end = begin + half;
    const GalaxyLayout layout = galaxyLayout(half);
    const size_t diskBegin = begin + layout.halo + layout.bulge;  // halo and bulge come first
    Vec3d c, l;
    double m = 0;
    for (size_t i = begin; i < end; ++i) {
      m += b.pos[i].w;
      c.x += b.pos[i].w * b.pos[i].x, c.y += b.pos[i].w * b.pos[i].y, c.z += b.pos[i].w * b.pos[i].z;
    }
    c.x /= m, c.y /= m, c.z /= m;
    // The rotation axis (angular momentum of the disk about the centre) is the disk's normal.
    for (size_t i = diskBegin; i < end; ++i) {
      const double x = b.pos[i].x - c.x, y = b.pos[i].y - c.y, z = b.pos[i].z - c.z;
      l.x += y * b.vel[i].z - z * b.vel[i].y;
      l.y += z * b.vel[i].x - x * b.vel[i].z;
      l.z += x * b.vel[i].y - y * b.vel[i].x;
    }
    const Vec3d expected{0.0, -std::sin(tilt[g]), std::cos(tilt[g])};
    const double ln = std::sqrt(l.x * l.x + l.y * l.y + l.z * l.z);
    const double cosAngle = std::fabs(l.x * expected.x + l.y * expected.y + l.z * expected.z) / ln;
    EXPECT_GT(cosAngle, std::cos(0.05)) << "galaxy " << g << ": rotation axis off the specified tilt";
    // Height above the specified plane, inner and outer parts of the disk separately.
    double h2[2] = {0, 0};
    size_t cnt[2] = {0, 0};
    for (size_t i = diskBegin; i < end; ++i) {
      const double x = b.pos[i].x - c.x, y = b.pos[i].y - c.y, z = b.pos[i].z - c.z;
      const double h = x * expected.x + y * expected.y + z * expected.z;
      const double r = std::sqrt(std::max(0.0, x * x + y * y + z * z - h * h));
      const int band = r < 1.0 ? 0 : (r > 2.0 ? 1 : -1);
      if (band < 0) continue;
      h2[band] += h * h;
      ++cnt[band];
    }
    ASSERT_GT(cnt[0], 100u);
    ASSERT_GT(cnt[1], 100u);
    const double inner = std::sqrt(h2[0] / cnt[0]), outer = std::sqrt(h2[1] / cnt[1]);
    EXPECT_LT(inner, 0.1) << "galaxy " << g;
    EXPECT_LT(outer, 0.1) << "galaxy " << g;
    EXPECT_LT(outer / inner, 1.3) << "galaxy " << g << ": thickness grows with radius (shear)";
  }
}

// Past one engine's 2^30 bodies only shares are made (boids over several ranks), up to the most
// 32-bit ids name. A share at the end of 4000M bodies is the tail of a longer share ending there:
// the generator's jump over billions of draws lands where stepping would.
TEST(Scenarios, SharesPastOneEnginesBoundCarryTheirIds) {
  EXPECT_EQ(checkBodyCount(kMaxBodies, false), "");
  EXPECT_EQ(checkBodyCount(kMaxBodies + 1, true), "");
  EXPECT_EQ(checkBodyCount(kMaxBodiesOverRanks, true), "");
  EXPECT_EQ(checkBodyCount(kMaxBodies + 1, false),
            "--n 1073741825 is out of range: allowed is 1 to 1073741824 (up to 4294967295 for boids over several "
            "ranks with --scenario uniform or dense)");
  EXPECT_EQ(checkBodyCount(kMaxBodiesOverRanks + 1, true), "--n 4294967296 is out of range: allowed is 1 to 4294967295");
  EXPECT_NE(checkBodyCount(0, true), "");
  SimParams p = defaultParams();
  ScenarioSpec spec;
  spec.name = "dense";
  spec.n = 4000000000u;
  spec.seed = 9;
  EXPECT_THROW(makeScenario(spec, p), UsageError);  // one process would make them all
  const size_t last = spec.n, first = last - 12;
  const Scenario tail = makeScenarioShare(spec, p, first, last);
  const Scenario longer = makeScenarioShare(spec, p, first - 20, last);
  ASSERT_EQ(tail.bodies.size(), 12u);
  for (size_t i = 0; i < tail.bodies.size(); ++i) {
    EXPECT_EQ(tail.bodies.id[i], uint32_t(first + i));
    EXPECT_EQ(std::memcmp(&tail.bodies.pos[i], &longer.bodies.pos[i + 20], sizeof(Vec4)), 0) << i;
    EXPECT_EQ(std::memcmp(&tail.bodies.vel[i], &longer.bodies.vel[i + 20], sizeof(Vec4)), 0) << i;
    for (float c : {tail.bodies.pos[i].x, tail.bodies.pos[i].y, tail.bodies.pos[i].z}) {
      EXPECT_GE(c, -tail.halfSize);
      EXPECT_LE(c, tail.halfSize);
    }
  }
  spec.n = kMaxBodiesOverRanks + 1;
  EXPECT_THROW(makeScenarioShare(spec, p, 0, 0), UsageError);
}

TEST(Scenarios, BadNamesAndCountsThrow) {
  SimParams p = defaultParams();
  EXPECT_THROW(make("tornado", 10, 1, p), UsageError);
  EXPECT_THROW(make("uniform", 0, 1, p), UsageError);
  EXPECT_THROW(make("uniform", kMaxBodies + 1, 1, p), UsageError);
  EXPECT_THROW(make("file:", 10, 1, p), UsageError);
  EXPECT_THROW(make("file:/nonexistent/bodies.txt", 10, 1, p), UsageError);
  EXPECT_EQ(naturalForce("galaxies"), ForceMode::Gravity);
  EXPECT_EQ(naturalForce("dense"), ForceMode::Boids);
}

// One galaxy is in equilibrium: virial ratio 2K / |W| near 1 for the whole system (halo, bulge
// and disk velocities all come from the potential of all three), the disk is thin (rms height
// near the sech^2 scale's pi / sqrt(12) z0 = 0.09) and rotates.
TEST(Scenarios, GalaxyIsAVirialisedThinRotatingDisk) {
  SimParams p = defaultParams();
  const size_t n = 6000;
  const Bodies b = make("galaxy", n, 3, p);
  const GalaxyLayout g = galaxyLayout(n);
  EXPECT_EQ(g.halo + g.bulge + g.disk, n);
  EXPECT_NEAR(totalMass(b), (1.0 + kGalaxyHaloToLuminous) * kGalaxyLuminousMass, 1e-3);
  double kinetic = 0;
  for (size_t i = 0; i < n; ++i) {
    const Vec4& v = b.vel[i];
    kinetic += 0.5 * b.pos[i].w * (double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
  }
  const double potential = totalEnergy(b, 1.0, p.gravity.softening) - kinetic;
  const double virial = 2.0 * kinetic / -potential;
  EXPECT_GT(virial, 0.85);
  EXPECT_LT(virial, 1.15);
  double z2 = 0, lz = 0;
  for (size_t i = g.halo + g.bulge; i < n; ++i) {
    z2 += double(b.pos[i].z) * b.pos[i].z;
    lz += double(b.pos[i].x) * b.vel[i].y - double(b.pos[i].y) * b.vel[i].x;
  }
  const double zRms = std::sqrt(z2 / double(g.disk));
  EXPECT_GT(zRms, 0.05);
  EXPECT_LT(zRms, 0.15);
  EXPECT_GT(lz / double(g.disk), 0.5);  // ~ r v_c with r ~ 2, v_c ~ 0.7
}

// A file's bodies in the Milky Way-Andromeda layout (blocks of bodies per component), cut down by
// --select ranges and an even subset, then scaled: each kept body is the one at its file index.
namespace {
Bodies numbered(size_t n) {
  Bodies b;
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const float f = float(i);
    b.pos[i] = Vec4{f, -f, 0.5f * f, 1.0f + f};
    b.vel[i] = Vec4{2.0f * f, 1.0f, -f, 0.0f};
    b.id[i] = uint32_t(i);
  }
  return b;
}
ScenarioSpec fileSpec() {
  ScenarioSpec s;
  s.name = "file:galaxies.txt";
  return s;
}
}  // namespace

TEST(ScenarioFile, SelectRangesParseOrRefuse) {
  const std::vector<BodyRange> r = parseSelect("0-3,7,10-12");
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].first, 0u);
  EXPECT_EQ(r[0].last, 3u);
  EXPECT_EQ(r[1].first, 7u);
  EXPECT_EQ(r[1].last, 7u);
  EXPECT_EQ(r[2].last, 12u);
  for (const char* bad : {"", "5-2", "3,1", "0-3,2-4", "a", "1-", "-1", "1,,2", "0-3,", "1.5"})
    EXPECT_THROW(parseSelect(bad), UsageError) << bad;
}

TEST(ScenarioFile, SelectThenEvenSubsetThenScale) {
  // Two galaxies of 40 bodies, each a disk (10), a bulge (10) and a halo (20): keep the disks and
  // bulges, then every 2nd of those 40.
  Bodies b = numbered(80);
  ScenarioSpec s = fileSpec();
  s.select = "0-19,40-59";
  s.fileSubset = true;
  s.n = 20;
  s.scaleLength = 2.0;
  s.scaleVelocity = 0.5;
  s.scaleMass = 4.0;
  const std::string note = takeFromFile(b, s, s.name);
  ASSERT_EQ(b.size(), 20u);
  for (size_t k = 0; k < 20; ++k) {
    const size_t kept = k < 10 ? 2 * k : 40 + 2 * (k - 10);  // file index of the k-th body kept
    const float f = float(kept);
    EXPECT_EQ(b.id[k], k);
    EXPECT_EQ(b.pos[k].x, 2.0f * f) << k;
    EXPECT_EQ(b.pos[k].y, -2.0f * f);
    EXPECT_EQ(b.pos[k].w, 4.0f * (1.0f + f));
    EXPECT_EQ(b.vel[k].x, f);
    EXPECT_EQ(b.vel[k].y, 0.5f);
  }
  EXPECT_TRUE(checkBodies(b).empty());
  EXPECT_NE(note.find("kept 40 of the 80"), std::string::npos) << note;
  EXPECT_NE(note.find("one body in every 2"), std::string::npos) << note;
  EXPECT_NE(note.find("mass x4"), std::string::npos) << note;
}

TEST(ScenarioFile, SubsetThatIsNotAMultipleIsEvenAndSaysSo) {
  Bodies b = numbered(10);
  ScenarioSpec s = fileSpec();
  s.fileSubset = true;
  s.n = 4;  // floor(i * 10 / 4): 0, 2, 5, 7
  const std::string note = takeFromFile(b, s, s.name);
  ASSERT_EQ(b.size(), 4u);
  const float want[] = {0, 2, 5, 7};
  for (size_t k = 0; k < 4; ++k) EXPECT_EQ(b.pos[k].x, want[k]) << k;
  EXPECT_NE(note.find("10 is not a multiple of 4"), std::string::npos) << note;
  // All of them, unscaled: nothing taken away, nothing to say.
  Bodies all = numbered(10);
  s.n = 10;
  EXPECT_EQ(takeFromFile(all, s, s.name), "");
  EXPECT_EQ(all.size(), 10u);
}

TEST(ScenarioFile, RangesAndCountsPastTheFileAndOverflowsAreRefused) {
  ScenarioSpec s = fileSpec();
  Bodies b = numbered(10);
  s.select = "5-10";
  EXPECT_THROW(takeFromFile(b, s, s.name), UsageError);
  s.select = "0-4";
  s.fileSubset = true;
  s.n = 6;
  EXPECT_THROW(takeFromFile(b, s, s.name), UsageError);
  s = fileSpec();
  s.scaleVelocity = 1e38;
  b = numbered(10);
  EXPECT_THROW(takeFromFile(b, s, s.name), UsageError);
  EXPECT_EQ(b.size(), 10u);  // a refusal leaves the bodies as they were
}
