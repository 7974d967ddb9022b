// The local rules (a body's new velocity from its neighbours within a reach), and the one
// dispatch from the parameters to a rule's type. The pipelines take the rule as a compile-time
// parameter and instantiate their loops through withLocalRule, so a rule added here runs on every
// pipeline, engine and rank count. How to add one: docs/design.md#rules-and-how-to-add-a-rule.
#pragma once

#include "core/params.h"
#include "core/rules/boids.h"
#include "core/rules/couzin.h"
#include "core/rules/vicsek.h"

namespace murmur::core {

// Calls f(R{}) with the type R of the local rule that p selects (core/rule_table.h names the
// rows; BoidsRule serves both cis565 and reynolds, VicsekRule vicsek, CouzinRule couzin).
template <typename F>
decltype(auto) withLocalRule(const SimParams& p, F&& f) {
  if (p.boids.rules == RuleSet::Vicsek) return f(VicsekRule{});
  if (p.boids.rules == RuleSet::Couzin) return f(CouzinRule{});
  return f(BoidsRule{});
}

// The radius the active local rule's neighbour search must cover: what sizes every grid, row
// plan, verlet skin, cluster box and halo.
inline float searchRadius(const SimParams& p) {
  return withLocalRule(p, [&](auto rule) { return decltype(rule)::radius(decltype(rule)::params(p)); });
}

// Whether the active local rule's sums keep the boids' neighbour counts (Rule::kBoidCounts), which
// a force pass that samples the observables reads.
inline bool samplesBoidCounts(const SimParams& p) {
  return withLocalRule(p, [&](auto rule) { return decltype(rule)::kBoidCounts; });
}

// Whether the active local rule's sums read a neighbour's velocity only through its unit vector
// (Rule::kHeadingRecords): a pipeline that keeps a record per body may then store the unit
// velocity there once a step (the rows pipeline's plane records) and add it per pair as it is.
inline bool headingRecords(const SimParams& p) {
  return withLocalRule(p, [&](auto rule) { return decltype(rule)::kHeadingRecords; });
}

// The active local rule's time step, and the fastest a body moves under it.
inline float localDt(const SimParams& p) {
  return withLocalRule(p, [&](auto rule) { return decltype(rule)::dt(decltype(rule)::params(p)); });
}
inline float localMaxSpeed(const SimParams& p) {
  return withLocalRule(p, [&](auto rule) { return decltype(rule)::maxSpeed(decltype(rule)::params(p)); });
}

}  // namespace murmur::core
