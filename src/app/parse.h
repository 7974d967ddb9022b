// Command-line values to numbers. Every option's text goes through parseOption, which parses and
// checks it by a core::ValueSpec (core/param_table.h: the same grammar and ranges the parameter
// table and the --params file use) and throws core::UsageError with one line that names the
// option as the user typed it, the value and what is allowed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/param_table.h"

namespace murmur::app {

// The one path from an option's text to its value. `label` names the quantity in the message
// ("--block-size 48 is invalid: block size must be a multiple of 32 from 32 to 1024").
double parseOption(const std::string& option, const std::string& text, const char* label, const core::ValueSpec& spec);

// Shorthands over parseOption for options that are not simulation parameters.
// A body count: digits with an optional k (10^3) or M (10^6) suffix ("25k", "1M", "262144").
uint64_t parseCount(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi);
// An integer in [lo, hi] (no suffix).
long long parseInt(const std::string& option, const std::string& text, long long lo, long long hi);
// A finite float, > 0 when positive is set, else >= 0.
float parseFloat(const std::string& option, const std::string& text, bool positive);
// One of `allowed`; returns it.
std::string parseName(const std::string& option, const std::string& text, const std::vector<std::string>& allowed);

// A comma-separated list; empty items are errors (the message quotes the whole list).
std::vector<std::string> splitList(const std::string& option, const std::string& text);

}  // namespace murmur::app
