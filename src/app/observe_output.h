// A headless run's observables (--observables FILE.csv every --observe-every steps) and trajectory
// (--trajectory FILE.h5 every --trajectory-every steps), sampled between steps, outside the timed
// part (docs/observables.md).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/options.h"
#include "core/engine.h"
#include "core/observables.h"
#include "core/trajectory.h"

namespace murmur::app {

// Throws UsageError (exit 2) when --observables or --trajectory cannot be written; before the run.
void checkObserveOutputs(const Options& o);

class ObserveOutput {
 public:
  // speaker: this rank writes the files (every rank samples: over several ranks sampling gathers).
  ObserveOutput(const Options& o, const core::SimParams& params, bool speaker);
  bool active() const { return observe_ || trajectory_; }

  // The state after `localSteps` steps of this run (warm-up included); samples what is due, the
  // first call always (the drifts' baseline). Collective over several ranks.
  void atStep(core::Engine& engine, uint64_t localSteps);
  // Writes the CSV (whole, atomically) and one line about what was written.
  void finish();
  size_t samples() const { return samples_; }
  double meanObserveMs() const { return samples_ ? observeMs_ / double(samples_) : 0; }

 private:
  const Options& o_;
  core::SimParams params_;
  bool speaker_;
  bool observe_, trajectory_;
  core::ObserveRequest request_;
  std::vector<core::Obs> columns_;
  std::vector<std::string> names_;
  core::ObservablesSeries series_;
  std::string csv_;
  uint64_t nextObserve_ = 0, nextFrame_ = 0;
  size_t samples_ = 0;
  double observeMs_ = 0;
  std::unique_ptr<core::trajectory::Writer> writer_;
};

// One CSV cell: empty for NaN (a value not computed), else full precision.
std::string observableCell(double v);

}  // namespace murmur::app
