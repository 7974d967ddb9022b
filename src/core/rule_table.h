// The rule table: one row per interaction rule, the sibling of the pipeline table
// (core/pipeline_table.h). A local rule (a body's new velocity from its neighbours within a reach:
// cis565, reynolds) runs on every boids pipeline through its unit under core/rules/; a field rule
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
};

// Every row: the local rules first, in RuleSet order, then the field rules.
const std::vector<RuleInfo>& ruleTable();
// The row p runs: its force, and for a local rule its rule set.
const RuleInfo& activeRule(const SimParams& p);
// The row named `name`, or null.
const RuleInfo* findRule(const std::string& name);
// The names of the local rules, for --rule's list of allowed values ("cis565, reynolds").
std::vector<std::string> localRuleNames();
// Makes p run rule r (its force, and for a local rule its rule set).
void selectRule(SimParams& p, const RuleInfo& r);
// Whether p's force is a local rule (the boids pipelines' loops run it).
inline bool runsLocalRule(const SimParams& p) { return p.force == ForceMode::Boids; }

}  // namespace murmur::core
