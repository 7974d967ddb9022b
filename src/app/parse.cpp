#include "app/parse.h"

#include "core/errors.h"

namespace murmur::app {

using core::UsageError;

namespace {
// The quantity an option sets, for messages: "--grid-dim" -> "grid-dim".
std::string labelOf(const std::string& option) { return option.rfind("--", 0) == 0 ? option.substr(2) : option; }
}  // namespace

double parseOption(const std::string& option, const std::string& text, const char* label, const core::ValueSpec& spec) {
  double v = 0;
  if (!core::parseValue(spec, text, v)) throw UsageError(core::invalidValueMessage(option, text, label, spec));
  return v;
}

uint64_t parseCount(const std::string& option, const std::string& text, uint64_t lo, uint64_t hi) {
  return static_cast<uint64_t>(parseOption(option, text, labelOf(option).c_str(), core::countRange(lo, hi)));
}

long long parseInt(const std::string& option, const std::string& text, long long lo, long long hi) {
  return static_cast<long long>(parseOption(option, text, labelOf(option).c_str(), core::intRange(lo, hi)));
}

float parseFloat(const std::string& option, const std::string& text, bool positive) {
  const core::ValueSpec spec = positive ? core::floatAbove(0) : core::floatAtLeast(0);
  return static_cast<float>(parseOption(option, text, labelOf(option).c_str(), spec));
}

std::string parseName(const std::string& option, const std::string& text, const std::vector<std::string>& allowed) {
  std::vector<const char*> names;
  for (const auto& a : allowed) names.push_back(a.c_str());
  const double i = parseOption(option, text, labelOf(option).c_str(), core::namesSpec(names));
  return allowed[static_cast<size_t>(i)];
}

std::vector<std::string> splitList(const std::string& option, const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.empty())
      throw UsageError(option + " " + (text.empty() ? std::string("''") : text) +
                       " is invalid: expected a comma-separated list without empty items");
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace murmur::app
