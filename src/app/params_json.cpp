#include "app/params_json.h"

#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "core/body_io.h"
#include "core/errors.h"
#include "core/param_table.h"

namespace murmur::app {

using nlohmann::json;
using core::ParamDesc;
using core::UsageError;
using core::ValueType;

namespace {

// The keys one level below `prefix` ("" for the top, "boids" for the boids object), in table order.
std::vector<std::string> keysBelow(const std::string& prefix) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  const std::string lead = prefix.empty() ? "" : prefix + ".";
  for (const ParamDesc& d : core::paramTable()) {
    const std::string key = d.key;
    if (key.compare(0, lead.size(), lead) != 0) continue;
    const std::string next = key.substr(lead.size(), key.find('.', lead.size()) - lead.size());
    if (seen.insert(next).second) keys.push_back(next);
  }
  return keys;
}

// One value of the file into its field: the JSON type must fit the row's type, and the value
// what the row allows.
void readValue(const std::string& file, const ParamDesc& d, const json& v, core::SimParams& p) {
  const std::string at = file + ": " + d.key + " = " + v.dump();
  double x = 0;
  switch (d.spec.type) {
    case ValueType::Enum:
      if (!v.is_string() || !core::parseValue(d.spec, v.get<std::string>(), x))
        throw UsageError(at + " is invalid: " + d.label + " must be " + core::allowedText(d.spec));
      break;
    case ValueType::Int:
    case ValueType::Count:
      if (!v.is_number_integer()) throw UsageError(at + " must be an integer");
      x = v.get<double>();
      break;
    case ValueType::Float:
      if (!v.is_number()) throw UsageError(at + " must be a number");
      x = v.get<double>();
      break;
  }
  if (!core::allowed(d.spec, x))
    throw UsageError(at + " is invalid: " + d.label + " must be " + core::allowedText(d.spec));
  d.set(p, x);
}

void readObject(const std::string& file, const std::string& prefix, const json& obj, core::SimParams& p) {
  const std::string where = file + (prefix.empty() ? "" : ": " + prefix);
  if (!obj.is_object()) throw UsageError(where + " must be a JSON object");
  const std::vector<std::string> keys = keysBelow(prefix);
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string path = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (const ParamDesc* d = core::findParam(path)) {
      readValue(file, *d, it.value(), p);
      continue;
    }
    bool group = false;
    for (const std::string& k : keys) group = group || k == it.key();
    if (!group) {
      std::string allowed;
      for (const std::string& k : keys) allowed += (allowed.empty() ? "" : ", ") + k;
      throw UsageError(where + ": unknown key '" + it.key() + "' (allowed: " + allowed + ")");
    }
    readObject(file, path, it.value(), p);
  }
}

}  // namespace

void loadParamsFile(const std::string& path, core::SimParams& p, std::set<std::string>* topKeys) {
  const std::string file = "--params " + (path.empty() ? std::string("''") : path);
  // A folder or a FIFO is refused by name instead of failing inside the stream (or blocking).
  core::requireRegularFile(file, path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(file + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw UsageError(file + ": read error");
  loadParamsText(file, text.str(), p, topKeys);
}

void loadParamsText(const std::string& file, const std::string& textIn, core::SimParams& p,
                    std::set<std::string>* topKeys) {
  std::string text = textIn;
  if (text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);  // a UTF-8 byte-order mark
  json doc;
  // The keys of each open object and the last one read: the parser would keep the later of two
  // equal keys silently.
  struct Open {
    std::set<std::string> keys;
    std::string last;
  };
  std::vector<Open> open;
  const json::parser_callback_t noDuplicates = [&](int, json::parse_event_t event, json& parsed) {
    if (event == json::parse_event_t::object_start) {
      open.emplace_back();
    } else if (event == json::parse_event_t::object_end) {
      if (!open.empty()) open.pop_back();
    } else if (event == json::parse_event_t::key && !open.empty()) {
      const std::string key = parsed.get<std::string>();
      if (!open.back().keys.insert(key).second) {
        std::string path;
        for (size_t i = 0; i + 1 < open.size(); ++i) path += open[i].last + ".";
        throw UsageError(file + ": " + path + key + " is given twice (one would be ignored)");
      }
      open.back().last = key;
    }
    return true;
  };
  try {
    doc = json::parse(text, noDuplicates);  // the whole text: junk after the value is an error
  } catch (const json::exception& e) {
    throw UsageError(file + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (topKeys && doc.is_object())
    for (auto it = doc.begin(); it != doc.end(); ++it) topKeys->insert(it.key());
  readObject(file, "", doc, p);
  const std::string err = core::validateParams(p);
  if (!err.empty()) throw UsageError(file + ": " + err);
}

std::string paramsToJson(const core::SimParams& p, int indent) {
  json j = json::object();
  for (const ParamDesc& d : core::paramTable()) {
    json* node = &j;
    std::string key = d.key;
    for (size_t dot; (dot = key.find('.')) != std::string::npos; key = key.substr(dot + 1))
      node = &(*node)[key.substr(0, dot)];
    const double v = d.get(p);
    switch (d.spec.type) {
      case ValueType::Enum: (*node)[key] = core::formatValue(d, v); break;
      case ValueType::Int:
      case ValueType::Count: (*node)[key] = static_cast<long long>(v); break;
      case ValueType::Float: (*node)[key] = static_cast<float>(v); break;
    }
  }
  return j.dump(indent);
}

}  // namespace murmur::app
