// Graceful stop for long runs. The first SIGINT or SIGTERM only sets a flag: the run finishes the
// step in progress, writes what was asked for (--out, CSV rows, the video trailer, the bench
// sidecar) and exits with 128 + the signal number (130, 143). The handler is installed with
// SA_RESETHAND, so a second signal finds the default action and ends the process at once.
#pragma once

namespace murmur::app {

class StopSignal {
 public:
  StopSignal();   // installs the handlers
  ~StopSignal();  // restores the previous ones
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // The signal received (SIGINT, SIGTERM), or 0.
  static int received();
  // 128 + received(): the shell's status for a process a signal stopped.
  static int exitStatus() { return 128 + received(); }
  static const char* name();  // "SIGINT", "SIGTERM" or ""
};

}  // namespace murmur::app
