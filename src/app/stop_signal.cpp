#include "app/stop_signal.h"

#include <csignal>

namespace murmur::app {

namespace {
volatile std::sig_atomic_t g_received = 0;
struct sigaction g_oldInt, g_oldTerm;

extern "C" void onStopSignal(int sig) { g_received = sig; }
}  // namespace

StopSignal::StopSignal() {
  g_received = 0;
  struct sigaction sa {};
  sa.sa_handler = onStopSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, &g_oldInt);
  sigaction(SIGTERM, &sa, &g_oldTerm);
}

StopSignal::~StopSignal() {
  sigaction(SIGINT, &g_oldInt, nullptr);
  sigaction(SIGTERM, &g_oldTerm, nullptr);
}

int StopSignal::received() { return g_received; }

const char* StopSignal::name() {
  return g_received == SIGINT ? "SIGINT" : g_received == SIGTERM ? "SIGTERM" : "";
}

}  // namespace murmur::app
