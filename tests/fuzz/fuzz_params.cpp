// libFuzzer target: the parameter reader (`--params FILE.json`, and the params line of a saved
// state). Any input must either be applied or throw UsageError; what is applied must pass the
// validator, since the engines trust validated parameters.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "app/params_json.h"
#include "core/errors.h"
#include "core/params.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  murmur::core::SimParams p = murmur::core::defaultParams();
  try {
    murmur::app::loadParamsText("--params fuzz", std::string(reinterpret_cast<const char*>(data), size), p);
    if (!murmur::core::validateParams(p).empty()) std::abort();
  } catch (const murmur::core::UsageError&) {
  }
  return 0;
}
