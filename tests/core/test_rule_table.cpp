// The rule table and the local rules' dispatch (docs/design.md#rules-and-how-to-add-a-rule).
#include <gtest/gtest.h>

#include <string>

#include "core/param_table.h"
#include "core/rule_table.h"
#include "core/rules/local_rules.h"

using namespace murmur::core;

TEST(RuleTable, EveryRowSelectsItselfAndNamesAKnownSection) {
  for (const RuleInfo& r : ruleTable()) {
    SimParams p = defaultParams();
    // From the other force, so that selecting the row has to change it.
    p.force = r.force == ForceMode::Boids ? ForceMode::Gravity : ForceMode::Boids;
    selectRule(p, r);
    EXPECT_EQ(p.force, r.force) << r.name;
    EXPECT_STREQ(activeRule(p).name, r.name);
    EXPECT_EQ(findRule(r.name), &r);
    // The section is a group of the parameter table, and the keys the row names are its rows.
    const std::string section = r.section;
    bool hasRows = false;
    for (const ParamDesc& d : paramTable()) hasRows = hasRows || std::string(d.key).rfind(section + ".", 0) == 0;
    EXPECT_TRUE(hasRows) << r.name << ": " << section;
    for (const char* key : {r.radiusKey, r.speedKey, r.noiseKey, r.dtKey}) {
      if (!key) continue;
      EXPECT_NE(findParam(key), nullptr) << r.name << ": " << key;
    }
    EXPECT_FALSE(std::string(r.summary).empty()) << r.name;
  }
  EXPECT_EQ(findRule("couzin-not-yet"), nullptr);
}

TEST(RuleTable, LocalRulesAreTheRuleSetsInOrder) {
  const auto names = localRuleNames();
  ASSERT_EQ(int(names.size()), enumCount<RuleSet>());
  for (int i = 0; i < enumCount<RuleSet>(); ++i) EXPECT_EQ(names[size_t(i)], toString(static_cast<RuleSet>(i)));
  // Gravity is a row of the same table, not a local rule.
  const RuleInfo* g = findRule("gravity");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->kind, RuleKind::Field);
  EXPECT_EQ(g->force, ForceMode::Gravity);
}

// ruleKind(f) is the kind of the rows that run f: boids local, gravity field.
TEST(RuleTable, RuleKindIsTheKindOfTheForcesRows) {
  EXPECT_EQ(ruleKind(ForceMode::Boids), RuleKind::Local);
  EXPECT_EQ(ruleKind(ForceMode::Gravity), RuleKind::Field);
  for (const RuleInfo& r : ruleTable()) EXPECT_EQ(ruleKind(r.force), r.kind) << r.name;
}

// The reach the pipelines plan with is the rule's: the largest of the three boids radii, whichever
// it is, and it follows a change of the parameters.
TEST(RuleTable, SearchRadiusIsTheActiveRulesReach) {
  SimParams p = defaultParams();
  p.boids.cohesionRadius = 2.0f;
  p.boids.separationRadius = 7.5f;
  p.boids.alignmentRadius = 3.0f;
  EXPECT_EQ(searchRadius(p), 7.5f);
  p.boids.alignmentRadius = 9.25f;
  EXPECT_EQ(searchRadius(p), 9.25f);
  EXPECT_EQ(BoidsRule::setup(p.boids).reach2, 9.25f * 9.25f);
  EXPECT_EQ(localDt(p), p.boids.dt);
  EXPECT_EQ(localMaxSpeed(p), p.boids.maxSpeed);
}

// The boids rule's two frames agree on what a neighbour adds: absolute sums over j != i, and
// relative sums that visit i itself and take it out again, give the same neighbour counts and
// the same velocity to float rounding.
TEST(RuleTable, BoidsRuleAbsoluteAndRelativeSumsAgree) {
  SimParams p = defaultParams();
  const BoidParams& b = p.boids;
  const BoidsRule::Setup su = BoidsRule::setup(b);
  const Vec4 pi{1.0f, 2.0f, 3.0f, 1.0f}, vi{0.3f, -0.2f, 0.1f, 0.0f};
  const Vec4 others[][2] = {{{2.0f, 2.5f, 3.0f, 1.0f}, {0.1f, 0.0f, 0.2f, 0.0f}},
                            {{1.0f, 6.0f, 3.0f, 1.0f}, {-0.4f, 0.1f, 0.0f, 0.0f}},
                            {{9.0f, 2.0f, 3.0f, 1.0f}, {1.0f, 1.0f, 1.0f, 0.0f}}};
  BoidsRule::Sum abs = BoidsRule::zero([] { return Vec4{0, 0, 0, 0}; });
  BoidsRule::RelSum rel = BoidsRule::relZero([] { return Vec4{0, 0, 0, 0}; });
  int velocityLoads = 0;
  for (const auto& o : others) {
    const Vec3 d = xyz(o[0]) - xyz(pi);
    BoidsRule::add(abs, o[0], d, distance2(d), [&] { ++velocityLoads; return o[1]; }, su);
    BoidsRule::addRel(rel, d, distance2(d), [&] { return o[1]; }, su);
  }
  BoidsRule::addRel(rel, Vec3{0, 0, 0}, 0.0f, [&] { return vi; }, su);
  BoidsRule::removeSelf(rel, vi, su);
  EXPECT_EQ(abs.n1, 2);
  EXPECT_EQ(abs.n3, 2);
  EXPECT_EQ(rel.n1, abs.n1);
  EXPECT_EQ(rel.n3, abs.n3);
  // Only the two neighbours inside the alignment radius had their velocity read.
  EXPECT_EQ(velocityLoads, 2);
  const Vec3 va = BoidsRule::velocity(abs, pi, vi, b, BodyDraws{}), vr = BoidsRule::velocityRel(rel, vi, b, BodyDraws{});
  EXPECT_NEAR(va.x, vr.x, 1e-6f);
  EXPECT_NEAR(va.y, vr.y, 1e-6f);
  EXPECT_NEAR(va.z, vr.z, 1e-6f);
}
