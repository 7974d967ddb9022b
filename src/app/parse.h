// Parsing and validation of command-line values. Every failure throws core::UsageError with one
// line that names the option, the value and what is allowed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace murmur::app {

// A body count: digits with an optional k (10^3) or M (10^6) suffix ("25k", "1M", "262144").
// Allowed range [lo, hi].
uint64_t parseCount(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi);

// An integer in [lo, hi] (no suffix).
long long parseInt(const std::string& option, const std::string& text, long long lo, long long hi);

// A finite float, > 0 when positive is set, else >= 0.
float parseFloat(const std::string& option, const std::string& text, bool positive);

// A CUDA block size: multiple of 32 in [32, 1024].
int parseBlockSize(const std::string& option, const std::string& text);

// One of `allowed`.
std::string parseName(const std::string& option, const std::string& text,
                      const std::vector<std::string>& allowed);

// Comma-separated list; each element parsed by `one`. Empty elements are errors.
std::vector<std::string> splitList(const std::string& option, const std::string& text);

}  // namespace murmur::app
