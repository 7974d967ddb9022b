#pragma once
// Steps an engine on a worker thread, so that the window keeps drawing and answering clicks however
// long one step takes (a million boids all-pairs on the CPU engine takes minutes per step). The
// window starts a step, polls for its end each frame, and touches the engine only while no step
// is in flight (fill the draw buffers, change parameters, reset). On the CUDA engine the step's
// kernels and the draw-buffer copy share the default stream, so they stay ordered across threads.
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/engine.h"

namespace murmur::app {

// One step's wall time (step and synchronize) and the engine's stage times of that same step,
// read on the thread that ran it before any other step can start: the panel shows the two
// together, so its stages are those of the step it shows and add up to it (what the stages do
// not cover is the rest: synchronising, the pipeline's own bookkeeping).
struct TimedStep {
  double ms = 0;
  core::StepProfile profile;
  // The step's time outside the stages (>= 0).
  double otherMs() const { return ms > profile.totalMs() ? ms - profile.totalMs() : 0.0; }
};
TimedStep timeOneStep(core::Engine& engine);

// The panel's items for a step: every stage of core/stages.h (the verlet list build included;
// the ranks' communication only where it took time, never in a window), then "other", the step's
// time outside them, so that the items add up to the step's time.
std::vector<std::pair<std::string, double>> stageItems(const TimedStep& step);

class AsyncStepper {
 public:
  AsyncStepper();
  ~AsyncStepper();  // waits for a step in flight, then stops the worker
  AsyncStepper(const AsyncStepper&) = delete;
  AsyncStepper& operator=(const AsyncStepper&) = delete;

  // Begins one step of `engine` (which must outlive it). Only when !busy().
  void start(core::Engine& engine);
  bool busy() const;
  // True once per finished step, with its wall-clock time (step and synchronize) in ms and its
  // stage times (timeOneStep). An exception thrown by the step is rethrown here, on the caller's
  // thread.
  bool poll(TimedStep* step);
  // Blocks until no step is in flight (the finished step is still reported by poll()).
  void wait();

 private:
  void run();
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  core::Engine* engine_ = nullptr;
  bool requested_ = false, busy_ = false, finished_ = false, quit_ = false;
  TimedStep last_;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace murmur::app
