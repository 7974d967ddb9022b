// SimParams <-> JSON (--params FILE.json and the benchmark's sidecar). nlohmann_json stays in
// the .cpp so nvcc never sees it.
#pragma once

#include <string>

#include "core/params.h"

namespace murmur::app {

// Applies the keys present in the file over `params`. Throws core::UsageError naming the file
// and the offending key or value (unknown keys and a key given twice in one object are errors,
// not ignored). `setsForce`, when given, says whether the file has the top-level "force" key.
void loadParamsFile(const std::string& path, core::SimParams& params, bool* setsForce = nullptr);

// The same from JSON text; `file` starts every message ("--params cfg.json"). Trailing text after
// the JSON value is an error.
void loadParamsText(const std::string& file, const std::string& text, core::SimParams& params,
                    bool* setsForce = nullptr);

// The full parameter set as a JSON object text.
std::string paramsToJson(const core::SimParams& params, int indent = 2);

}  // namespace murmur::app
