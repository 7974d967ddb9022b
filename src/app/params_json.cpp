#include "app/params_json.h"

#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

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
  std::ifstream in(path);
  if (!in) throw UsageError("--params " + path + ": cannot open");
  json doc;
  try {
    in >> doc;
  } catch (const json::exception& e) {
    throw UsageError("--params " + path + ": not valid JSON (" + std::string(e.what()) + ")");
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
      {"theta", F(p.gravity.theta)},
      {"treeLeafSize", I(p.gravity.treeLeafSize)},
      {"integrator", [&](const std::string& w, const json& v) { readEnum(w, v, p.gravity.integrator); }}};
  const std::map<std::string, Setter> top = {
      {"force", [&](const std::string& w, const json& v) { readEnum(w, v, p.force); }},
      {"pipeline", [&](const std::string& w, const json& v) { readEnum(w, v, p.pipeline); }},
      {"boids", [&](const std::string& w, const json& v) { applyObject(w, v, boidKeys); }},
      {"gravity", [&](const std::string& w, const json& v) { applyObject(w, v, gravityKeys); }},
      {"halfSize", F(p.halfSize)},
      {"cellWidthFactor", I(p.cellWidthFactor)},
      {"blockSize", I(p.blockSize)}};
  applyObject("--params " + path, doc, top);
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw UsageError("--params " + path + ": " + err);
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
                  {"theta", p.gravity.theta},
                  {"treeLeafSize", p.gravity.treeLeafSize},
                  {"integrator", core::toString(p.gravity.integrator)}};
  j["halfSize"] = p.halfSize;
  j["cellWidthFactor"] = p.cellWidthFactor;
  j["blockSize"] = p.blockSize;
  return j.dump(indent);
}

}  // namespace murmur::app
