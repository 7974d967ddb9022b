// The rule table: one row per interaction rule, the sibling of the pipeline table
// (core/pipeline_table.h). A local rule (a body's new velocity from its neighbours within a reach:
// cis565, reynolds, vicsek, couzin) runs on every boids pipeline through its unit under core/rules/; a field rule
// (gravity: every body pulls on every body) runs on the pipelines that serve it. --rule, --force,
// the --params sections, --help, the benchmark's columns and the docs read these rows. How to add
// a rule: docs/design.md#rules-and-how-to-add-a-rule.
#pragma once

#include <string>
#include <vector>

#include "core/params.h"

namespace murmur::core {

enum class RuleKind : int { Local = 0, Field = 1 };

struct RuleInfo {
  const char* name;     // the one spelling: --rule (local rules), --force, JSON, CSV, panel
  RuleKind kind;        // local: neighbours within a reach; field: all pairs or a far field
  ForceMode force;      // the force mode a step of this rule runs
  RuleSet ruleSet;      // local rules: BoidParams::rules of the row (field rules: unused)
  const char* section;  // its section of --params files and state headers; its parameter keys' prefix
  const char* summary;  // one line for --help and the docs
  // The parameters the shared options --radius, --speed and --noise set while this rule is the
  // active one (core/param_table.h sharedOptions): keys of the parameter table, null where the
  // rule has no such parameter (the boids' three radii are no one radius).
  const char* radiusKey;
  const char* speedKey;
  const char* noiseKey;
  // Its time step's parameter key (what --dt sets while the rule is active).
  const char* dtKey;
  // The boundary a run gets when --rule picks this rule and --boundary does not name one.
  Boundary boundary;
  // The rule keeps every body at its speed parameter (speedKey): scenarios start the bodies at it,
  // in random directions, and a state read from a file is set to it.
  bool constantSpeed;
};

// The speed every body of p's active rule keeps, or 0 when the rule has no constant speed.
float constantSpeedOf(const SimParams& p);

// Every row: the local rules first, in RuleSet order, then the field rules. The first row is the
// rule a run has when nothing selects one (defaultParams).
const std::vector<RuleInfo>& ruleTable();
// The first row: the rule of defaultParams.
const RuleInfo& defaultRule();
// The row p runs: its force, and for a local rule its rule set.
const RuleInfo& activeRule(const SimParams& p);
// The row named `name`, or null.
const RuleInfo* findRule(const std::string& name);
// The names of the local rules, for --rule's list of allowed values ("cis565, reynolds").
std::vector<std::string> localRuleNames();
// --rule's help: the local rules with their summaries, from the rows.
const std::string& localRuleHelp();
// Makes p run rule r (its force, and for a local rule its rule set).
void selectRule(SimParams& p, const RuleInfo& r);
// Whether a step of force f runs a local rule (the boids pipelines' loops, the boids grid, the
// slabs over ranks) rather than a field rule: the kind of the rows that run f.
bool runsLocalRule(ForceMode f);
// The kind of the rules that run force f (local: runsLocalRule(f)).
inline RuleKind ruleKind(ForceMode f) { return runsLocalRule(f) ? RuleKind::Local : RuleKind::Field; }
// Whether p's force is a local rule.
inline bool runsLocalRule(const SimParams& p) { return runsLocalRule(p.force); }
// The force mode a step of every local rule runs (the table checks that they share one).
ForceMode localRuleForce();

}  // namespace murmur::core
