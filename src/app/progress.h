#pragma once
// Progress of a long run on a terminal: steps done, rate and time left, redrawn in place a few
// times a second on stderr. When stderr is not a terminal (a log file, a test), a line is written
// only every 30 s and only once a run has lasted that long, so that short runs stay quiet and long
// ones still show they are alive.
#include <chrono>
#include <deque>
#include <functional>
#include <string>

namespace murmur::app {

// "m:ss" or "h:mm:ss".
std::string clockText(double seconds);

class Progress {
 public:
  // `what` names the unit ("steps", "frames"); `total` is how many there will be.
  Progress(const char* what, long total);
  // The same with a clock of its own (seconds, non-decreasing; tests drive it) and no output.
  Progress(const char* what, long total, std::function<double()> clock);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` are finished. Cheap when nothing is due to be printed.
  void update(long done);
  // Clears the terminal line (the summary follows on a clean line).
  void finish();

  // Seconds left at the last update, from the rate of the recent steps (the last quarter of the
  // time so far): a run whose steps slow down (a collapsing galaxy) is not judged by its first.
  // Negative before any estimate.
  double secondsLeft() const { return left_; }
  // Steps (or frames) per second over that recent window, as the line prints it.
  double recentRate() const { return rate_; }

 private:
  double now() const;
  void print(long done, double elapsed);

  std::string what_;
  long total_;
  bool terminal_;
  bool quiet_ = false;
  bool drawn_ = false;
  std::function<double()> clock_;
  double start_ = 0, lastPrint_ = 0;
  std::deque<std::pair<double, long>> samples_;  // (seconds since start, done), oldest first
  double left_ = -1, rate_ = 0;
};

}  // namespace murmur::app
