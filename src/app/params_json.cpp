#include "app/params_json.h"

#include <climits>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/body_io.h"
#include "core/errors.h"

namespace murmur::app {

using nlohmann::json;
using core::UsageError;

namespace {

template <typename EnumT>
void readEnum(const std::string& where, const json& v, EnumT& out) {
  if (!v.is_string() || !core::parse(v.get<std::string>(), out))
    throw UsageError(where + " = " + v.dump() + " is not a known name");
}

void readFloat(const std::string& where, const json& v, float& out) {
  if (!v.is_number()) throw UsageError(where + " = " + v.dump() + " must be a number");
  out = v.get<float>();
}

void readInt(const std::string& where, const json& v, int& out) {
  if (!v.is_number_integer()) throw UsageError(where + " = " + v.dump() + " must be an integer");
  // get<int>() would wrap 4294967297 to 1.
  const bool fits = v.is_number_unsigned() ? v.get<uint64_t>() <= uint64_t(INT_MAX)
                                           : v.get<int64_t>() >= INT_MIN && v.get<int64_t>() <= INT_MAX;
  if (!fits) throw UsageError(where + " = " + v.dump() + " is out of range for an integer");
  out = v.get<int>();
}

using Setter = std::function<void(const std::string&, const json&)>;

void applyObject(const std::string& where, const json& obj, const std::map<std::string, Setter>& keys) {
  if (!obj.is_object()) throw UsageError(where + " must be a JSON object");
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    auto k = keys.find(it.key());
    if (k == keys.end()) {
      std::string allowed;
      for (const auto& kv : keys) allowed += (allowed.empty() ? "" : ", ") + kv.first;
      throw UsageError(where + ": unknown key '" + it.key() + "' (allowed: " + allowed + ")");
    }
    k->second(where + "." + it.key(), it.value());
  }
}

}  // namespace

void loadParamsFile(const std::string& path, core::SimParams& p) {
  const std::string where = "--params " + (path.empty() ? std::string("''") : path);
  core::requireRegularFile(where, path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(where + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(where + ": read error");
  loadParamsText(where, text.str(), p);
}

void loadParamsText(const std::string& where, const std::string& textIn, core::SimParams& p) {
  std::string text = textIn;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a UTF-8 byte-order mark
  json doc;
  try {
    doc = json::parse(text);  // the whole text: junk after the value is an error
  } catch (const json::exception& e) {
    throw UsageError(where + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  auto F = [](float& f) { return Setter([&f](const std::string& w, const json& v) { readFloat(w, v, f); }); };
  auto I = [](int& i) { return Setter([&i](const std::string& w, const json& v) { readInt(w, v, i); }); };
  const std::map<std::string, Setter> boidKeys = {
      {"cohesionRadius", F(p.boids.cohesionRadius)},   {"separationRadius", F(p.boids.separationRadius)},
      {"alignmentRadius", F(p.boids.alignmentRadius)}, {"cohesionScale", F(p.boids.cohesionScale)},
      {"separationScale", F(p.boids.separationScale)}, {"alignmentScale", F(p.boids.alignmentScale)},
      {"maxSpeed", F(p.boids.maxSpeed)},               {"dt", F(p.boids.dt)},
      {"rules", [&](const std::string& w, const json& v) { readEnum(w, v, p.boids.rules); }}};
  const std::map<std::string, Setter> gravityKeys = {
      {"G", F(p.gravity.G)},
      {"softening", F(p.gravity.softening)},
      {"damping", F(p.gravity.damping)},
      {"dt", F(p.gravity.dt)},
      {"gridDim", I(p.gravity.gridDim)},
      {"gridSpread", F(p.gravity.gridSpread)},
      {"integrator", [&](const std::string& w, const json& v) { readEnum(w, v, p.gravity.integrator); }}};
  const std::map<std::string, Setter> top = {
      {"force", [&](const std::string& w, const json& v) { readEnum(w, v, p.force); }},
      {"pipeline", [&](const std::string& w, const json& v) { readEnum(w, v, p.pipeline); }},
      {"boids", [&](const std::string& w, const json& v) { applyObject(w, v, boidKeys); }},
      {"gravity", [&](const std::string& w, const json& v) { applyObject(w, v, gravityKeys); }},
      {"halfSize", F(p.halfSize)},
      {"cellWidthFactor", I(p.cellWidthFactor)},
      {"blockSize", I(p.blockSize)}};
  applyObject(where, doc, top);
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw UsageError(where + ": " + err);
}

std::string paramsToJson(const core::SimParams& p, int indent) {
  json j;
  j["force"] = core::toString(p.force);
  j["pipeline"] = core::toString(p.pipeline);
  j["boids"] = {{"cohesionRadius", p.boids.cohesionRadius},   {"separationRadius", p.boids.separationRadius},
                {"alignmentRadius", p.boids.alignmentRadius}, {"cohesionScale", p.boids.cohesionScale},
                {"separationScale", p.boids.separationScale}, {"alignmentScale", p.boids.alignmentScale},
                {"maxSpeed", p.boids.maxSpeed},               {"dt", p.boids.dt},
                {"rules", core::toString(p.boids.rules)}};
  j["gravity"] = {{"G", p.gravity.G},
                  {"softening", p.gravity.softening},
                  {"damping", p.gravity.damping},
                  {"dt", p.gravity.dt},
                  {"gridDim", p.gravity.gridDim},
                  {"gridSpread", p.gravity.gridSpread},
                  {"integrator", core::toString(p.gravity.integrator)}};
  j["halfSize"] = p.halfSize;
  j["cellWidthFactor"] = p.cellWidthFactor;
  j["blockSize"] = p.blockSize;
  return j.dump(indent);
}

}  // namespace murmur::app
