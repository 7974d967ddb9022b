#include "core/rule_table.h"

#include <stdexcept>

#include "core/param_table.h"

namespace murmur::core {

namespace {

std::vector<RuleInfo> makeTable() {
  // clang-format off
  std::vector<RuleInfo> t = {
  //  name        kind             force               ruleSet            section    summary
  //  then the keys --radius, --speed and --noise set, the time step's key, the default boundary,
  //  whether the speed is constant
      {"cis565",   RuleKind::Local, ForceMode::Boids,   RuleSet::Cis565,   "boids",
       "boids (CIS 565): cohesion, separation, and alignment that adds the neighbours' mean velocity",
       nullptr, "boids.maxSpeed", nullptr, "boids.dt", Boundary::Wrap, false},
      {"reynolds", RuleKind::Local, ForceMode::Boids,   RuleSet::Reynolds, "boids",
       "boids (Reynolds): cohesion, separation, and alignment that steers towards the neighbours' mean velocity",
       nullptr, "boids.maxSpeed", nullptr, "boids.dt", Boundary::Wrap, false},
      {"vicsek",   RuleKind::Local, ForceMode::Boids,   RuleSet::Vicsek,   "vicsek",
       "Vicsek (1995): constant speed, the heading of everyone within the radius (itself included), then noise",
       "vicsek.radius", "vicsek.speed", "vicsek.noise", "vicsek.dt", Boundary::Periodic, true},
      {"couzin",   RuleKind::Local, ForceMode::Boids,   RuleSet::Couzin,   "couzin",
       "Couzin (2002): constant speed, zones of repulsion, orientation and attraction seen through a field of "
       "perception, a turning rate, Gaussian noise",
       nullptr, "couzin.speed", "couzin.noise", "couzin.dt", Boundary::Open, true},
      {"gravity",  RuleKind::Field, ForceMode::Gravity, RuleSet{},         "gravity",
       "softened Newtonian gravity: all pairs, a grid's far field, or a Barnes-Hut tree",
       nullptr, nullptr, nullptr, "gravity.dt", Boundary::Wrap, false},
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
  // Every force has rows, all of one kind (runsLocalRule asks the kind of a force), and the local
  // rules share one force (localRuleForce).
  for (int f = 0; f < enumCount<ForceMode>(); ++f) {
    int rows = 0, localRows = 0;
    for (const RuleInfo& r : t) {
      if (static_cast<int>(r.force) != f) continue;
      ++rows;
      localRows += r.kind == RuleKind::Local;
    }
    if (rows == 0) throw std::logic_error(std::string("rule table: no rule runs force ") + toString(ForceMode(f)));
    if (localRows != 0 && localRows != rows)
      throw std::logic_error(std::string("rule table: force ") + toString(ForceMode(f)) +
                             " runs local and field rules");
    if (localRows != 0 && localRows != local)
      throw std::logic_error("rule table: the local rules run different forces");
  }
  if (t.empty() || t.front().kind != RuleKind::Local) throw std::logic_error("rule table: the first row is not local");
  return t;
}

}  // namespace

const std::vector<RuleInfo>& ruleTable() {
  static const std::vector<RuleInfo> table = makeTable();
  return table;
}

const RuleInfo& defaultRule() { return ruleTable().front(); }

bool runsLocalRule(ForceMode f) {
  for (const RuleInfo& r : ruleTable())
    if (r.force == f) return r.kind == RuleKind::Local;
  throw std::invalid_argument("no rule runs force " + std::to_string(static_cast<int>(f)));
}

ForceMode localRuleForce() { return ruleTable().front().force; }

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

const std::string& localRuleHelp() {
  static const std::string help = [] {
    std::string h = "Local rule (the neighbours' effect; --force gravity runs gravity):";
    bool first = true;
    for (const RuleInfo& r : ruleTable()) {
      if (r.kind != RuleKind::Local) continue;
      h += std::string(first ? " " : "; ") + r.name + " = " + r.summary;
      first = false;
    }
    return h;
  }();
  return help;
}

float constantSpeedOf(const SimParams& p) {
  const RuleInfo& r = activeRule(p);
  if (!r.constantSpeed) return 0.0f;
  const ParamDesc* d = r.speedKey ? findParam(r.speedKey) : nullptr;
  if (!d) throw std::logic_error(std::string("rule table: ") + r.name + " keeps a constant speed but names no speed");
  return static_cast<float>(d->get(p));
}

void selectRule(SimParams& p, const RuleInfo& r) {
  p.force = r.force;
  if (r.kind == RuleKind::Local) p.boids.rules = r.ruleSet;
}

}  // namespace murmur::core
