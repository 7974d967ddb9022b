#pragma once
// Steps an engine on a worker thread, so that the window keeps drawing and answering clicks however
// long one step takes (a million boids all-pairs on the CPU engine takes minutes per step). The
// window starts a step, polls for its end each frame, and touches the engine only while no step
// is in flight (fill the draw buffers, change parameters, reset). On the CUDA engine the step's
// kernels and the draw-buffer copy share the default stream, so they stay ordered across threads.
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "core/engine.h"

namespace murmur::app {

class AsyncStepper {
 public:
  AsyncStepper();
  ~AsyncStepper();  // waits for a step in flight, then stops the worker
  AsyncStepper(const AsyncStepper&) = delete;
  AsyncStepper& operator=(const AsyncStepper&) = delete;

  // Begins one step of `engine` (which must outlive it). Only when !busy().
  void start(core::Engine& engine);
  bool busy() const;
  // True once per finished step, with its wall-clock time (step and synchronize) in ms. An
  // exception thrown by the step is rethrown here, on the caller's thread.
  bool poll(double* ms);
  // Blocks until no step is in flight (the finished step is still reported by poll()).
  void wait();

 private:
  void run();
  mutable std::mutex mutex_;
  std::condition_variable wake_, idle_;
  core::Engine* engine_ = nullptr;
  bool requested_ = false, busy_ = false, finished_ = false, quit_ = false;
  double ms_ = 0;
  std::exception_ptr error_;
  std::thread worker_;
};

}  // namespace murmur::app
