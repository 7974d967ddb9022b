#include "app/async_stepper.h"

#include <chrono>

namespace murmur::app {

// One long-lived worker rather than a thread per step: the CPU engine's OpenMP team belongs to the
// thread that starts it, and a fresh thread each step would build a fresh team each step.
AsyncStepper::AsyncStepper() : worker_([this] { run(); }) {}

AsyncStepper::~AsyncStepper() {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [this] { return !busy_; });
    quit_ = true;
  }
  wake_.notify_one();
  worker_.join();
}

void AsyncStepper::start(core::Engine& engine) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (busy_) return;
    engine_ = &engine;
    requested_ = true;
    busy_ = true;
  }
  wake_.notify_one();
}

bool AsyncStepper::busy() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return busy_;
}

bool AsyncStepper::poll(double* ms) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    finished_ = false;
    std::rethrow_exception(e);
  }
  if (!finished_) return false;
  finished_ = false;
  if (ms) *ms = ms_;
  return true;
}

void AsyncStepper::wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return !busy_; });
}

void AsyncStepper::run() {
  for (;;) {
    core::Engine* engine = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [this] { return requested_ || quit_; });
      if (quit_) return;
      requested_ = false;
      engine = engine_;
    }
    double ms = 0;
    std::exception_ptr error;
    try {
      const auto t0 = std::chrono::steady_clock::now();
      engine->step(1);
      engine->synchronize();
      ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    } catch (...) {
      error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      busy_ = false;
      if (error) {
        error_ = error;
      } else {
        finished_ = true;
        ms_ = ms;
      }
    }
    idle_.notify_all();
  }
}

}  // namespace murmur::app
