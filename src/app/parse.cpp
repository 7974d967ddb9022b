#include "app/parse.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "core/errors.h"

namespace murmur::app {

using core::UsageError;

namespace {
[[noreturn]] void fail(const std::string& option, const std::string& text, const std::string& allowed) {
  throw UsageError(option + " " + (text.empty() ? "''" : text) + " is invalid: " + allowed);
}

bool allDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}
}  // namespace

uint64_t parseCount(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi) {
  const std::string allowed = "expected a whole number from " + std::to_string(lo) + " to " +
                              std::to_string(hi) + " (suffix k = 1000, M = 1000000 allowed)";
  std::string digits = text;
  uint64_t mult = 1;
  if (!digits.empty() && (digits.back() == 'k' || digits.back() == 'K')) {
    mult = 1000;
    digits.pop_back();
  } else if (!digits.empty() && digits.back() == 'M') {
    mult = 1000000;
    digits.pop_back();
  }
  if (!allDigits(digits) || digits.size() > 12) fail(option, text, allowed);
  const uint64_t v = std::strtoull(digits.c_str(), nullptr, 10) * mult;
  if (v < lo || v > hi) fail(option, text, allowed);
  return v;
}

long long parseInt(const std::string& option, const std::string& text, long long lo, long long hi) {
  const std::string allowed =
      "expected a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
  std::string digits = text;
  bool neg = false;
  if (!digits.empty() && digits[0] == '-') {
    neg = true;
    digits.erase(0, 1);
  }
  if (!allDigits(digits) || digits.size() > 15) fail(option, text, allowed);
  long long v = std::strtoll(digits.c_str(), nullptr, 10);
  if (neg) v = -v;
  if (v < lo || v > hi) fail(option, text, allowed);
  return v;
}

float parseFloat(const std::string& option, const std::string& text, bool positive) {
  const std::string allowed = positive ? "expected a finite number > 0" : "expected a finite number >= 0";
  if (text.empty()) fail(option, text, allowed);
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(v) ||
      std::fabs(v) > 3.0e38)
    fail(option, text, allowed);
  if (positive ? !(v > 0) : !(v >= 0)) fail(option, text, allowed);
  return static_cast<float>(v);
}

int parseBlockSize(const std::string& option, const std::string& text) {
  const std::string allowed = "block size must be a multiple of 32 from 32 to 1024";
  std::string digits = text;
  if (!allDigits(digits) || digits.size() > 6) fail(option, text, allowed);
  const long v = std::strtol(digits.c_str(), nullptr, 10);
  if (v < 32 || v > 1024 || v % 32 != 0) fail(option, text, allowed);
  return static_cast<int>(v);
}

std::string parseName(const std::string& option, const std::string& text,
                      const std::vector<std::string>& allowed) {
  for (const auto& a : allowed)
    if (a == text) return text;
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  fail(option, text, "allowed: " + list);
}

std::vector<std::string> splitList(const std::string& option, const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty()) fail(option, text, "expected a comma-separated list without empty items");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace murmur::app
