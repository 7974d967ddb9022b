// Per-stage GPU timing with CUDA events. When profiling is off the timer records nothing (no
// events, no sync). When on, each stage of a step is bracketed by a pair of events on the engine's
// stream; endStep() waits for the step's last event (the only host sync a profiled step makes)
// and sums the elapsed times per stage (core/stages.h). Events come from a pool that grows on the first profiled
// steps and is reused afterwards.
#pragma once

#include "cuda/module_guard.h"

#include <cuda_runtime_api.h>

#include <vector>

#include "core/engine.h"
#include "core/stages.h"

namespace murmur::cuda {

class StageTimer {
 public:
  StageTimer() = default;
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

  void beginStep(bool enabled, cudaStream_t stream);
  // Forgets what this step recorded so far (the leapfrog's one-off initial force evaluation is
  // not part of the step's stages, as in the CPU engine).
  void discard() { records_.clear(); used_ = 0; }
  // Waits for the step's events and returns the per-stage sums; all zero when not enabled.
  core::StepProfile endStep();

  // Runs f() (which enqueues work) between two events of `stage` when enabled.
  template <typename F>
  void stage(core::Stage s, F&& f) {
    if (!enabled_) {
      f();
      return;
    }
    const int start = nextEvent();
    const int stop = nextEvent();
    record(start);
    f();
    record(stop);
    records_.push_back(Record{s, start, stop});
  }

 private:
  struct Record {
    core::Stage stage;
    int start, stop;
  };
  int nextEvent();
  void record(int event);

  bool enabled_ = false;
  cudaStream_t stream_ = nullptr;
  std::vector<cudaEvent_t> pool_;
  int used_ = 0;
  std::vector<Record> records_;
};

}  // namespace murmur::cuda
