#pragma once
// Progress of a long run on a terminal: steps done, rate and time left, redrawn in place a few
// times a second on stderr. When stderr is not a terminal (a log file, a test), a line is written
// only every 30 s and only once a run has lasted that long, so that short runs stay quiet and long
// ones still show they are alive.
#include <chrono>
#include <string>

namespace murmur::app {

// "m:ss" or "h:mm:ss".
std::string clockText(double seconds);

class Progress {
 public:
  // `what` names the unit ("steps", "frames"); `total` is how many there will be.
  Progress(const char* what, long total);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` of `total` are finished. Cheap when nothing is due to be printed.
  void update(long done);
  // Clears the terminal line (the summary follows on a clean line).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string what_;
  long total_;
  bool terminal_;
  bool drawn_ = false;
  Clock::time_point start_, lastPrint_;
};

}  // namespace murmur::app
