// Every simulation parameter described once: its JSON key, its command-line option, the words
// the panel and the messages use, its unit, what values it may take and a line of help. The
// validator, the --params reader and writer, the command line and the viewer's panel all walk
// this table, so adding a parameter is one row in param_table.cpp plus the physics that reads it.
//
// Values travel as double between the table and the fields: every float, every int up to 2^53
// and every enum index survives the round trip exactly.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "core/params.h"
#include "core/rule_table.h"

namespace murmur::core {

enum class ValueType {
  Float,  // a finite decimal number: 0.25, -3, 1e-3 (no hex, no inf/nan, no spaces)
  Int,    // a whole number: 42, -7
  Count,  // a whole number with an optional k (1e3) or M (1e6) suffix: 25k, 1M
  Enum,   // one of `names`; the value is the index
};

// What a value may be. Ranges are inclusive unless loOpen (then v > lo).
struct ValueSpec {
  ValueType type = ValueType::Float;
  double lo = 0, hi = 3.0e38;  // the default hi keeps a float finite
  bool loOpen = false;
  int multipleOf = 1;  // Int: the value is a multiple of this (block sizes: whole warps)
  const char* const* names = nullptr;
  int numNames = 0;
};

ValueSpec floatAbove(double lo, double hi = 3.0e38);    // lo < v <= hi
ValueSpec floatAtLeast(double lo, double hi = 3.0e38);  // lo <= v <= hi
ValueSpec intRange(long long lo, long long hi, int multipleOf = 1);
ValueSpec countRange(unsigned long long lo, unsigned long long hi);
template <typename EnumT>
ValueSpec enumSpec() {
  ValueSpec s;
  s.type = ValueType::Enum;
  s.names = EnumNames<EnumT>::names;
  s.numNames = enumCount<EnumT>();
  return s;
}
ValueSpec namesSpec(const std::vector<const char*>& names);  // names must outlive the spec

// What the spec allows, as a message ends: "a finite number > 0", "a whole number from 1 to 128",
// "a multiple of 32 from 32 to 1024", "one of: naive, scattered, coherent".
std::string allowedText(const ValueSpec& s);

// True when v is finite, in range and (Int, Count, Enum) whole and a multiple of multipleOf.
bool allowed(const ValueSpec& s, double v);

// Parses the whole of `text` by the spec's grammar and checks it with allowed(). The one place a
// value typed by a user becomes a number.
bool parseValue(const ValueSpec& s, const std::string& text, double& out);

// "<what> <text> is invalid: <label> must be <allowed>", e.g.
// "--block-size 48 is invalid: block size must be a multiple of 32 from 32 to 1024".
std::string invalidValueMessage(const std::string& what, const std::string& text, const char* label,
                                const ValueSpec& s);

struct ParamDesc {
  const char* key;     // JSON path, dot-separated: "boids.cohesionRadius"
  const char* option;  // command line: "--cohesion-radius"
  const char* label;   // panel and messages: "cohesion radius r1"
  const char* unit;    // "world units", "1/step", or "" (a count, a name)
  const char* help;    // one line for --help
  ValueSpec spec;
  double (*get)(const SimParams&);
  void (*set)(SimParams&, double);
  // The panel's slider range (inside spec's range); equal ends keep the field off the panel
  // (it needs a reset, or has its own control).
  double panelLo, panelHi;
  bool panelLog;  // logarithmic slider (values spanning decades)
};

const std::vector<ParamDesc>& paramTable();

// Old spellings of a parameter's option that still parse, as the option they stand for:
// --rules is --rule (the rule table's local rules). Giving both is refused.
struct OptionAlias {
  const char* alias;   // "--rules"
  const char* option;  // the row's option, "--rule"
};
const std::vector<OptionAlias>& optionAliases();
// The row whose option (or an alias of it) is `option`, or null.
const ParamDesc* findParamByOption(const std::string& option);

// Options every rule may share, each setting a parameter of the active rule (core/rule_table.h
// RuleInfo::radiusKey, speedKey, noiseKey): --radius (the interaction radius), --speed (the speed:
// a constant speed, or the boids' top speed) and --noise (the noise amplitude). What a rule lacks
// is refused, naming the rules that have it.
struct SharedOption {
  const char* option;  // "--radius"
  const char* what;    // "radius": for messages
  const char* help;    // one line for --help
  const char* RuleInfo::*key;
};
const std::vector<SharedOption>& sharedOptions();
// The row `o` sets under p's active rule; null when that rule has none, with `why` a line that
// names the rule and the rules that have it.
const ParamDesc* sharedOptionTarget(const SharedOption& o, const SimParams& p, std::string* why);

// The row with this key ("gravity.dt"); nullptr when none.
const ParamDesc* findParam(const std::string& key);

// The value as the JSON file and the summary lines write it: a number, or an enum's name.
std::string formatValue(const ParamDesc& d, double v);

namespace detail {
template <typename T>
double toDouble(T v) {
  if constexpr (std::is_enum_v<T>)
    return static_cast<double>(static_cast<int>(v));
  else
    return static_cast<double>(v);
}
template <typename T>
T fromDouble(double v) {
  if constexpr (std::is_enum_v<T>)
    return static_cast<T>(static_cast<int>(v));
  else
    return static_cast<T>(v);
}
}  // namespace detail

}  // namespace murmur::core

// The accessor pair of a table row for the SimParams field at `path` (e.g. boids.dt).
#define MURMUR_PARAM_FIELD(path)                                                                      \
  [](const ::murmur::core::SimParams& p) { return ::murmur::core::detail::toDouble(p.path); },       \
      [](::murmur::core::SimParams& p, double v) {                                                    \
        p.path = ::murmur::core::detail::fromDouble<decltype(p.path)>(v);                              \
      }
