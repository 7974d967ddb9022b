#include "app/progress.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <unistd.h>

namespace murmur::app {

std::string clockText(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

Progress::Progress(const char* what, long total)
    : what_(what), total_(total), terminal_(isatty(STDERR_FILENO) == 1) {
  const auto origin = std::chrono::steady_clock::now();
  clock_ = [origin] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count(); };
  start_ = lastPrint_ = now();
}

Progress::Progress(const char* what, long total, std::function<double()> clock)
    : what_(what), total_(total), terminal_(false), quiet_(true), clock_(std::move(clock)) {
  start_ = lastPrint_ = now();
}

Progress::~Progress() { finish(); }

double Progress::now() const { return clock_(); }

void Progress::update(long done) {
  const double t = now() - start_;
  // The recent window: the last quarter of the time so far. Samples are kept a few hundred to a
  // window at most (one per 1/256 of the elapsed time), so a call per step stays cheap.
  if (samples_.empty() || t - samples_.back().first >= t / 256.0) samples_.emplace_back(t, done);
  const double window = t * 0.25;
  while (samples_.size() > 2 && samples_[1].first <= t - window) samples_.pop_front();
  if (done > 0 && samples_.size() >= 2) {
    const double dt = t - samples_.front().first;
    const long dn = done - samples_.front().second;
    if (dt > 0 && dn > 0) {
      rate_ = double(dn) / dt;
      left_ = double(total_ - done) / rate_;
    }
  }
  // A terminal line is cheap to redraw; a log gets one line per half minute.
  const double every = terminal_ ? 0.25 : 30.0;
  if (quiet_ || t - (lastPrint_ - start_) < every || done <= 0 || left_ < 0) return;
  lastPrint_ = start_ + t;
  print(done, t);
}

void Progress::print(long done, double elapsed) {
  char line[160];
  std::snprintf(line, sizeof line, "%ld/%ld %s (%.0f%%), %.3g %s/s, %s elapsed, %s left", done, total_,
                what_.c_str(), 100.0 * double(done) / double(std::max(total_, 1L)), rate_, what_.c_str(),
                clockText(elapsed).c_str(), clockText(left_).c_str());
  if (terminal_) {
    std::fprintf(stderr, "\r%s\033[K", line);
    drawn_ = true;
  } else {
    std::fprintf(stderr, "murmur: %s\n", line);
  }
  std::fflush(stderr);
}

void Progress::finish() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace murmur::app
