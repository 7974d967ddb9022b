#include "core/format.h"

#include <cstdio>
#include <ctime>

namespace murmur::core {

std::string formatGiB(size_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", double(bytes) / double(size_t(1) << 30));
  return buf;
}

std::string formatBytes(size_t bytes) {
  if (double(bytes) / double(size_t(1) << 30) >= 0.1) return formatGiB(bytes);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", double(bytes) / double(size_t(1) << 20));
  return buf;
}

std::string isoUtcNow() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace murmur::core
