// The attributes a body carries are declared once (core/bodies.h): every path that moves bodies
// visits the declaration, so a species travels wherever its body goes. Here: the gathers, the id
// order, the checks, and the CPU engine on every pipeline (a reorder that dropped or mixed an
// attribute would give a body another's species).
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/cpu_engine.h"
#include "core/pipeline_table.h"
#include "test_helpers.h"

using namespace murmur::core;
using murmur::test::randomBodies;

namespace {

// A species that differs between neighbouring ids and is often not 0.
Species speciesOf(uint32_t id) { return static_cast<Species>((id * 37u + 11u) % kSpeciesCount); }

Bodies withSpecies(Bodies b) {
  b.species.resize(b.size());
  for (size_t i = 0; i < b.size(); ++i) b.species[i] = speciesOf(b.id[i]);
  return b;
}

bool sameBits(const Vec4& a, const Vec4& b) { return std::memcmp(&a, &b, sizeof(Vec4)) == 0; }

}  // namespace

TEST(Bodies, TheDeclarationListsEveryAttributeOnce) {
  Bodies b;
  std::vector<std::string> names;
  b.forEach([&](const char* name, const auto&) { names.push_back(name); });
  EXPECT_EQ(names, (std::vector<std::string>{"pos", "vel", "id", "species"}));
  EXPECT_EQ(static_cast<int>(names.size()), kAttributeCount);
  b.resize(7);
  b.forEach([&](const char* name, const auto& a) { EXPECT_EQ(a.size(), 7u) << name; });
}

TEST(Bodies, GathersAndIdOrderMoveEveryAttribute) {
  Bodies b = withSpecies(randomBodies(500, 10.0f, 1.0f, 3));
  // A state in some engine order: shuffled by a fixed permutation.
  std::vector<uint32_t> perm(b.size());
  std::iota(perm.begin(), perm.end(), 0u);
  for (size_t i = perm.size() - 1; i > 0; --i) std::swap(perm[i], perm[(i * 7919u) % (i + 1)]);
  const Bodies shuffled = gatherBodies(b, perm);
  for (size_t k = 0; k < perm.size(); ++k) {
    EXPECT_EQ(shuffled.id[k], b.id[perm[k]]);
    EXPECT_EQ(shuffled.species[k], speciesOf(shuffled.id[k]));
    EXPECT_TRUE(sameBits(shuffled.pos[k], b.pos[perm[k]]));
  }
  const Bodies back = bodiesInIdOrder(shuffled);
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(back.id[i], i);
    EXPECT_EQ(back.species[i], speciesOf(static_cast<uint32_t>(i)));
    EXPECT_TRUE(sameBits(back.pos[i], b.pos[i]) && sameBits(back.vel[i], b.vel[i]));
  }
  std::vector<uint32_t> bad{0, 500};
  EXPECT_THROW(gatherBodies(b, bad), std::logic_error);
}

TEST(Bodies, SpeciesIsOptionalOnTheWayInAndOtherwiseOnePerBody) {
  Bodies b = randomBodies(40, 5.0f, 1.0f, 1);
  EXPECT_EQ(checkBodies(b), "");  // none: species 0 throughout
  withDefaults(b);
  ASSERT_EQ(b.species.size(), 40u);
  for (Species s : b.species) EXPECT_EQ(s, 0);
  b.species.resize(39);
  EXPECT_NE(checkBodies(b).find("species has 39 entries for 40 bodies"), std::string::npos) << checkBodies(b);
  CpuEngine e(defaultParams());
  EXPECT_THROW(e.reset(b), std::invalid_argument);
}

// Every pipeline of both forces, several steps (each reorders into cell or key order): every body
// keeps its species, and the species changes nothing of the physics (the same run without species
// gives the same bits).
TEST(Bodies, SpeciesTravelsWithItsBodyOnEveryCpuPipeline) {
  for (ForceMode f : {ForceMode::Boids, ForceMode::Gravity}) {
    for (const PipelineInfo& row : pipelineTable()) {
      if (f == ForceMode::Boids && !row.boids) continue;
      SimParams p = defaultParams();
      p.force = f;
      p.pipeline = row.id;
      p.halfSize = 12.0f;
      const Bodies plain = randomBodies(1200, 12.0f, 1.0f, 17);
      const std::string tag = std::string(toString(f)) + " on " + toString(row.id);
      CpuEngine with(p), without(p);
      with.reset(withSpecies(plain));
      without.reset(plain);
      with.step(4);
      without.step(4);
      const Bodies a = with.readBodies(), b = without.readBodies();
      ASSERT_EQ(a.species.size(), a.size()) << tag;
      ASSERT_EQ(b.species.size(), b.size()) << tag;
      for (size_t i = 0; i < a.size(); ++i) {
        ASSERT_EQ(a.species[i], speciesOf(static_cast<uint32_t>(i))) << tag << ", body " << i;
        ASSERT_EQ(b.species[i], 0) << tag << ", body " << i;
        ASSERT_TRUE(sameBits(a.pos[i], b.pos[i]) && sameBits(a.vel[i], b.vel[i])) << tag << ", body " << i;
      }
    }
  }
}
