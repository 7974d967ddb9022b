// What each option applies to, kept as data beside the parameter table: the forces, pipelines
// (read from the pipeline table, core/pipeline_table.h), integrator and engine a parameter
// serves, and the options a headless run, a sweep or murmur accuracy would ignore. One checker
// refuses what a run would silently ignore, naming what the option applies to.
#pragma once

#include <string>
#include <vector>

#include "app/options.h"
#include "core/params.h"
#include "core/rule_table.h"

namespace murmur::app {

// What a run, or a sweep, runs: the rules are checked against it. A sweep meets a rule when
// some of its configurations do.
struct RunTarget {
  std::vector<core::ForceMode> forces;    // a run: one
  std::vector<core::Pipeline> pipelines;  // a run: one; a sweep: its list (empty: every pipeline)
  core::Integrator integrator = core::Integrator::Leapfrog;
  core::EngineKind engine = core::EngineKind::Cpu;
  const core::RuleInfo* rule = nullptr;  // the local rule the run's boids use (core/rule_table.h)
  bool sweep = false;
  // What the message adds when the target's forces do not meet the rule, or the rest does not:
  // " (this run: boids, pipeline naive)", " (this sweep's forces: boids)", " (not in the sweep)".
  std::string forceContext, otherContext;
};

// Throws core::UsageError "<option> <value> applies to <what> only<context>" when the parameter
// of `option` does not apply to the target. atParse: the rules checked while parsing, in every
// mode (--list-steps); otherwise the rest, for headless runs and sweeps (resolveDefaults).
void checkParamApplies(const std::string& option, const std::string& value, const RunTarget& t, bool atParse);

// Options a headless run or a sweep would silently ignore are refused, naming what they apply
// to. The viewer takes them all: its force, pipeline and drawing change while it runs.
void checkOptionsApply(const Options& o);

// murmur accuracy compares the gravity pipelines' forces on one state: the options that pick the
// state, the engine and the gravity parameters apply, nothing else.
void checkAccuracyOptions(const Options& o, const std::vector<std::pair<std::string, std::string>>& outputs);

}  // namespace murmur::app
