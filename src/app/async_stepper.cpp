#include "app/async_stepper.h"

#include <chrono>

#include "core/stages.h"

namespace murmur::app {

TimedStep timeOneStep(core::Engine& engine) {
  TimedStep t;
  const auto t0 = std::chrono::steady_clock::now();
  engine.step(1);
  engine.synchronize();
  t.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  t.profile = engine.lastProfile();
  return t;
}

// One long-lived worker rather than a thread per step: the CPU engine's OpenMP team belongs to the
// thread that starts it, and a fresh thread each step would build a fresh team each step.
std::vector<std::pair<std::string, double>> stageItems(const TimedStep& step) {
  std::vector<std::pair<std::string, double>> items;
  for (int i = 0; i < core::kStageCount; ++i) {
    const auto s = static_cast<core::Stage>(i);
    if (s == core::Stage::Comm && step.profile.at(s) == 0) continue;
    items.emplace_back(s == core::Stage::Integrate ? "integ." : core::kStageNames[i], step.profile.at(s));
  }
  items.emplace_back("other", step.otherMs());
  return items;
}

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

bool AsyncStepper::poll(TimedStep* step) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (error_) {
    std::exception_ptr e = error_;
    error_ = nullptr;
    finished_ = false;
    std::rethrow_exception(e);
  }
  if (!finished_) return false;
  finished_ = false;
  if (step) *step = last_;
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
    TimedStep done;
    std::exception_ptr error;
    try {
      done = timeOneStep(*engine);
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
        last_ = done;
      }
    }
    idle_.notify_all();
  }
}

}  // namespace murmur::app
