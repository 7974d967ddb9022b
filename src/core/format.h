// Small helpers every layer uses, written once: elapsed time, byte sizes and UTC timestamps.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace murmur::core {

// Milliseconds from t0 to now on the steady clock.
inline double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// "12.3 GiB": one decimal, always GiB (memory refusals of hosts and ranks).
std::string formatGiB(size_t bytes);
// "1.5 GiB", or "12.3 MiB" below a tenth of a GiB (GPU memory refusals).
std::string formatBytes(size_t bytes);
// Now in UTC, ISO 8601 to the second: "2026-11-26T15:55:06Z" (CSV timestamps, FPS logs).
std::string isoUtcNow();

}  // namespace murmur::core
