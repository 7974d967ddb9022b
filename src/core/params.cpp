#include "core/params.h"

#include <cmath>
#include <sstream>

namespace murmur::core {

SimParams defaultParams() {
  SimParams p{};
  p.force = ForceMode::Boids;
  p.pipeline = Pipeline::Coherent;
  p.boids.cohesionRadius = 5.0f;
  p.boids.separationRadius = 3.0f;
  p.boids.alignmentRadius = 5.0f;
  p.boids.cohesionScale = 0.01f;
  p.boids.separationScale = 0.1f;
  p.boids.alignmentScale = 0.1f;
  p.boids.maxSpeed = 1.0f;
  p.boids.dt = 0.2f;
  p.boids.rules = RuleSet::Cis565;
  p.gravity.G = 1.0f;
  p.gravity.softening = 0.05f;
  p.gravity.damping = 1.0f;
  p.gravity.dt = 0.005f;
  p.gravity.integrator = Integrator::Leapfrog;
  p.gravity.gridDim = 16;
  p.gravity.gridSpread = 2.5f;
  p.gravity.theta = 0.45f;
  p.gravity.treeLeafSize = 16;
  p.halfSize = 100.0f;
  p.cellWidthFactor = 1;
  p.blockSize = 256;
  p.profile = false;
  return p;
}

namespace {

// Positive and finite; reports `name` with its value otherwise.
bool positive(std::ostringstream& err, const char* name, float v) {
  if (std::isfinite(v) && v > 0.0f) return true;
  err << name << " = " << v << " is invalid: must be a finite number > 0";
  return false;
}

bool nonNegative(std::ostringstream& err, const char* name, float v) {
  if (std::isfinite(v) && v >= 0.0f) return true;
  err << name << " = " << v << " is invalid: must be a finite number >= 0";
  return false;
}

}  // namespace

std::string validateParams(const SimParams& p) {
  std::ostringstream e;
  const BoidParams& b = p.boids;
  const GravityParams& g = p.gravity;
  bool ok = positive(e, "boids.cohesionRadius", b.cohesionRadius) &&
            positive(e, "boids.separationRadius", b.separationRadius) &&
            positive(e, "boids.alignmentRadius", b.alignmentRadius) &&
            nonNegative(e, "boids.cohesionScale", b.cohesionScale) &&
            nonNegative(e, "boids.separationScale", b.separationScale) &&
            nonNegative(e, "boids.alignmentScale", b.alignmentScale) &&
            positive(e, "boids.maxSpeed", b.maxSpeed) && positive(e, "boids.dt", b.dt) &&
            nonNegative(e, "gravity.G", g.G) && positive(e, "gravity.softening", g.softening) &&
            positive(e, "gravity.dt", g.dt) && nonNegative(e, "gravity.gridSpread", g.gridSpread) && positive(e, "halfSize", p.halfSize);
  if (!ok) return e.str();
  if (!(g.softening * g.softening > 1e-30f)) {
    // The self pair divides by eps^2 (r = 0): its square must stay a normal float.
    e << "gravity.softening = " << g.softening << " is invalid: must be at least 1e-15";
    return e.str();
  }
  if (!(g.damping > 0.0f && g.damping <= 1.0f)) {
    e << "gravity.damping = " << g.damping << " is invalid: allowed range is (0, 1]";
    return e.str();
  }
  if (maxRuleRadius(b) * 2.0f > 2.0f * p.halfSize) {
    e << "boids radius " << maxRuleRadius(b) << " is invalid: must be at most halfSize (" << p.halfSize
      << ")";
    return e.str();
  }
  if (p.cellWidthFactor != 1 && p.cellWidthFactor != 2) {
    e << "cell width factor = " << p.cellWidthFactor << " is invalid: allowed values are 1 and 2";
    return e.str();
  }
  if (p.blockSize < kMinBlockSize || p.blockSize > kMaxBlockSize || p.blockSize % 32 != 0) {
    e << "block size = " << p.blockSize << " is invalid: must be a multiple of 32 in [32, 1024]";
    return e.str();
  }
  if (g.gridDim < 1 || g.gridDim > kMaxGravityGridDim) {
    e << "gravity.gridDim = " << g.gridDim << " is invalid: allowed range is [1, "
      << kMaxGravityGridDim << "]";
    return e.str();
  }
  // Above 1 a group could accept a node that overlaps it (see core/tree.h combineChildren).
  if (!(g.theta > 0.0f && g.theta <= 1.0f)) {
    e << "gravity.theta = " << g.theta << " is invalid: allowed range is (0, 1]";
    return e.str();
  }
  if (g.treeLeafSize < 1 || g.treeLeafSize > kMaxTreeLeafSize) {
    e << "gravity.treeLeafSize = " << g.treeLeafSize << " is invalid: allowed range is [1, " << kMaxTreeLeafSize
      << "]";
    return e.str();
  }
  if (static_cast<int>(p.force) < 0 || static_cast<int>(p.force) > 1 ||
      static_cast<int>(p.pipeline) < 0 || static_cast<int>(p.pipeline) > 3) {
    return "force or pipeline enum out of range";
  }
  if (p.force == ForceMode::Boids && p.pipeline == Pipeline::Tree) return std::string("pipeline tree: ") + kTreeBoidsMessage;
  // The boids grid must stay addressable with 32-bit cell keys.
  double cells = std::ceil(2.0 * p.halfSize / (maxRuleRadius(b) * p.cellWidthFactor));
  if (cells * cells * cells > 4.0e9) {
    e << "halfSize " << p.halfSize << " with radius " << maxRuleRadius(b)
      << " needs more than 2^32 grid cells: use a smaller world or a larger cell width";
    return e.str();
  }
  return {};
}

namespace {
template <typename EnumT, size_t N>
bool parseNames(const std::string& s, const char* const (&names)[N], EnumT& out) {
  for (size_t i = 0; i < N; ++i) {
    if (s == names[i]) {
      out = static_cast<EnumT>(i);
      return true;
    }
  }
  return false;
}
const char* const kForceNames[] = {"boids", "gravity"};
const char* const kPipelineNames[] = {"naive", "scattered", "coherent", "tree"};
const char* const kEngineNames[] = {"cpu", "cuda"};
const char* const kRuleNames[] = {"cis565", "reynolds"};
const char* const kIntegratorNames[] = {"leapfrog", "euler"};
}  // namespace

const char* toString(ForceMode v) { return kForceNames[static_cast<int>(v)]; }
const char* toString(Pipeline v) { return kPipelineNames[static_cast<int>(v)]; }
const char* toString(EngineKind v) { return kEngineNames[static_cast<int>(v)]; }
const char* toString(RuleSet v) { return kRuleNames[static_cast<int>(v)]; }
const char* toString(Integrator v) { return kIntegratorNames[static_cast<int>(v)]; }
bool parse(const std::string& s, ForceMode& out) { return parseNames(s, kForceNames, out); }
bool parse(const std::string& s, Pipeline& out) { return parseNames(s, kPipelineNames, out); }
bool parse(const std::string& s, EngineKind& out) { return parseNames(s, kEngineNames, out); }
bool parse(const std::string& s, RuleSet& out) { return parseNames(s, kRuleNames, out); }
bool parse(const std::string& s, Integrator& out) { return parseNames(s, kIntegratorNames, out); }

}  // namespace murmur::core
