// SimParams <-> JSON (--params FILE.json and the benchmark's sidecar). nlohmann_json stays in
// the .cpp so nvcc never sees it.
#pragma once

#include <set>
#include <string>

#include "core/params.h"

namespace murmur::app {

// Applies the keys present in the file over `params`. Throws core::UsageError naming the file
// and the offending key or value (unknown keys and a key given twice in one object are errors,
// not ignored). `topKeys`, when given, receives the file's top-level keys ("force", "halfSize",
// "boids", ...): what the file sets, for the choices that depend on it.
void loadParamsFile(const std::string& path, core::SimParams& params, std::set<std::string>* topKeys = nullptr);

// The same from JSON text; `file` starts every message ("--params cfg.json"). Trailing text after
// the JSON value is an error.
void loadParamsText(const std::string& file, const std::string& text, core::SimParams& params,
                    std::set<std::string>* topKeys = nullptr);

// The full parameter set as a JSON object text.
std::string paramsToJson(const core::SimParams& params, int indent = 2);

}  // namespace murmur::app
