// The pieces of the command line's parse, shared by its files (internal to src/app):
//   cli_definition.cpp     the options, subcommands and help; CLI11's parse and its errors
//   option_precedence.cpp  where parameters come from, in rising precedence
//   applies_to.cpp         the options a run would ignore, refused as data (app/applies_to.h)
//   options.cpp            parseOptions and resolveDefaults, which put them in order
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "app/bench.h"
#include "app/options.h"

namespace murmur::app::cli {

// An option's text as typed. CLI11 only stores it; app/parse.h turns it into a value, so that
// every message has one shape. given() tells an empty value (an error) from an absent option.
struct Given {
  std::string text;
  CLI::Option* option = nullptr;
  bool given() const { return option && option->count() > 0; }
};
using GivenMap = std::map<std::string, Given>;

// The command line as defined (defineCommandLine) and, after parseCommandLine, as typed.
struct CommandLine {
  CLI::App app{"Murmuration: real-time GPU flocking and n-body simulator"};
  CLI::App* accuracy = nullptr;
  CLI::App* bench = nullptr;
  GivenMap given, benchGiven, accuracyGiven;  // the main command's, bench's and accuracy's values
  bool headless = false, noRender = false;

  bool has(const char* name) const { return given.at(name).given(); }
  const std::string& text(const char* name) const { return given.at(name).text; }
};

// cli_definition.cpp
void defineCommandLine(CommandLine& cl, Options& o);
// CLI11's parse with murmur's messages. False when help was printed.
bool parseCommandLine(CommandLine& cl, int argc, char** argv);
// The values of the main command's options: parameters, then the app's own.
void applyParamOptions(const GivenMap& given, core::SimParams& p);
void applyAppValues(const GivenMap& given, bool bench, Options& o);
void applyBenchOptions(const GivenMap& given, Options& o);
// The files a run writes, as (option, path); an empty path is an option not given.
std::vector<std::pair<std::string, std::string>> namedOutputs(const Options& o);

// option_precedence.cpp: the parameters in rising precedence (preset, state header, --params
// file, options) and the scenario. Returns the bench preset (nullptr when none).
const BenchPreset* applyParameterSources(const CommandLine& cl, int argc, char** argv, Options& o);

}  // namespace murmur::app::cli
