#include "core/rule_table.h"

#include <stdexcept>

namespace murmur::core {

namespace {

std::vector<RuleInfo> makeTable() {
  // clang-format off
  std::vector<RuleInfo> t = {
  //  name        kind             force               ruleSet            section    summary
      {"cis565",   RuleKind::Local, ForceMode::Boids,   RuleSet::Cis565,   "boids",
       "boids (CIS 565): cohesion, separation, and alignment that adds the neighbours' mean velocity"},
      {"reynolds", RuleKind::Local, ForceMode::Boids,   RuleSet::Reynolds, "boids",
       "boids (Reynolds): cohesion, separation, and alignment that steers towards the neighbours' mean velocity"},
      {"gravity",  RuleKind::Field, ForceMode::Gravity, RuleSet::Cis565,   "gravity",
       "softened Newtonian gravity: all pairs, a grid's far field, or a Barnes-Hut tree"},
  };
  // clang-format on
  // The local rows are the rule sets, in their order: BoidParams::rules indexes them.
  int local = 0;
  for (const RuleInfo& r : t) {
    if (r.kind != RuleKind::Local) continue;
    if (static_cast<int>(r.ruleSet) != local || std::string(r.name) != toString(r.ruleSet))
      throw std::logic_error(std::string("rule table: local rule ") + r.name + " is out of rule-set order");
    ++local;
  }
  if (local != enumCount<RuleSet>()) throw std::logic_error("rule table: a rule set has no row");
  return t;
}

}  // namespace

const std::vector<RuleInfo>& ruleTable() {
  static const std::vector<RuleInfo> table = makeTable();
  return table;
}

const RuleInfo& activeRule(const SimParams& p) {
  for (const RuleInfo& r : ruleTable())
    if (r.force == p.force && (r.kind == RuleKind::Field || r.ruleSet == p.boids.rules)) return r;
  throw std::invalid_argument("no rule runs force " + std::string(toString(p.force)) + " with rule set " +
                              toString(p.boids.rules));
}

const RuleInfo* findRule(const std::string& name) {
  for (const RuleInfo& r : ruleTable())
    if (name == r.name) return &r;
  return nullptr;
}

std::vector<std::string> localRuleNames() {
  std::vector<std::string> names;
  for (const RuleInfo& r : ruleTable())
    if (r.kind == RuleKind::Local) names.push_back(r.name);
  return names;
}

void selectRule(SimParams& p, const RuleInfo& r) {
  p.force = r.force;
  if (r.kind == RuleKind::Local) p.boids.rules = r.ruleSet;
}

}  // namespace murmur::core
