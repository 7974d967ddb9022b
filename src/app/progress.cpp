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
    : what_(what), total_(total), terminal_(isatty(STDERR_FILENO) == 1), start_(Clock::now()), lastPrint_(start_) {}

Progress::~Progress() { finish(); }

void Progress::update(long done) {
  const auto now = Clock::now();
  const double sinceLast = std::chrono::duration<double>(now - lastPrint_).count();
  // A terminal line is cheap to redraw; a log gets one line per half minute.
  const double every = terminal_ ? 0.25 : 30.0;
  if (sinceLast < every || done <= 0) return;
  lastPrint_ = now;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = double(done) / std::max(elapsed, 1e-9);
  const double left = double(total_ - done) / std::max(rate, 1e-9);
  char line[160];
  std::snprintf(line, sizeof line, "%ld/%ld %s (%.0f%%), %.3g %s/s, %s elapsed, %s left", done, total_,
                what_.c_str(), 100.0 * double(done) / double(std::max(total_, 1L)), rate, what_.c_str(),
                clockText(elapsed).c_str(), clockText(left).c_str());
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
