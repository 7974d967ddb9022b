#include "core/param_table.h"

#include <cerrno>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "core/rule_table.h"
#include "core/topological.h"

namespace murmur::core {

namespace {

// Whole numbers as digits (1073741824, not 1.07374e+09), others as %g.
std::string numberText(double v) {
  char buf[64];
  // Whole numbers up to 2^53 (every one of them is exact in a double) in full: a limit of 2^53
  // read as 9.0072e+15 is not the limit.
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) <= 9007199254740992.0)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// Consumes a run of digits from s[i]; returns how many.
size_t digitsAt(const std::string& s, size_t& i) {
  const size_t start = i;
  while (i < s.size() && isDigit(s[i])) ++i;
  return i - start;
}

// -?(digits[.digits?] | .digits)([eE][+-]?digits)?: what a person types as a decimal number.
// strtod alone would also take hex floats, "inf", "nan" and leading spaces.
bool decimalGrammar(const std::string& s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t mantissa = digitsAt(s, i);
  if (i < s.size() && s[i] == '.') {
    ++i;
    mantissa += digitsAt(s, i);
  }
  if (mantissa == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digitsAt(s, i) == 0) return false;
  }
  return i == s.size();
}

}  // namespace

ValueSpec floatAbove(double lo, double hi) {
  ValueSpec s;
  s.lo = lo;
  s.hi = hi;
  s.loOpen = true;
  return s;
}

ValueSpec floatAtLeast(double lo, double hi) {
  ValueSpec s;
  s.lo = lo;
  s.hi = hi;
  return s;
}

ValueSpec intRange(long long lo, long long hi, int multipleOf) {
  ValueSpec s;
  s.type = ValueType::Int;
  s.lo = static_cast<double>(lo);
  s.hi = static_cast<double>(hi);
  s.multipleOf = multipleOf;
  return s;
}

ValueSpec countRange(unsigned long long lo, unsigned long long hi) {
  ValueSpec s;
  s.type = ValueType::Count;
  s.lo = static_cast<double>(lo);
  s.hi = static_cast<double>(hi);
  return s;
}

ValueSpec namesSpec(const std::vector<const char*>& names) {
  ValueSpec s;
  s.type = ValueType::Enum;
  s.names = names.data();
  s.numNames = static_cast<int>(names.size());
  return s;
}

std::string allowedText(const ValueSpec& s) {
  switch (s.type) {
    case ValueType::Float: {
      std::string t = std::string("a finite number ") + (s.loOpen ? "> " : ">= ") + numberText(s.lo);
      if (s.hi < 3.0e38) t += " and at most " + numberText(s.hi);
      return t;
    }
    case ValueType::Int:
      if (s.multipleOf > 1)
        return "a multiple of " + std::to_string(s.multipleOf) + " from " + numberText(s.lo) + " to " +
               numberText(s.hi);
      return "a whole number from " + numberText(s.lo) + " to " + numberText(s.hi);
    case ValueType::Count:
      return "a whole number from " + numberText(s.lo) + " to " + numberText(s.hi) +
             " (suffix k = 1000, M = 1000000 allowed)";
    case ValueType::Enum: {
      std::string t = "one of: ";
      for (int i = 0; i < s.numNames; ++i) t += (i ? ", " : "") + std::string(s.names[i]);
      return t;
    }
  }
  return {};
}

bool allowed(const ValueSpec& s, double v) {
  if (!std::isfinite(v)) return false;
  if (s.type == ValueType::Enum) return v == std::floor(v) && v >= 0 && v < s.numNames;
  if (s.loOpen ? !(v > s.lo) : !(v >= s.lo)) return false;
  if (!(v <= s.hi)) return false;
  // Every float field is a float: a value below the smallest normal float would turn into 0 or
  // a denormal on the way (--dt 1e-46 ran with the default dt).
  if (s.type == ValueType::Float) return v == 0 || std::fabs(v) >= double(FLT_MIN);
  return v == std::floor(v) && std::fmod(v, double(s.multipleOf)) == 0.0;
}

bool parseValue(const ValueSpec& s, const std::string& text, double& out) {
  double v = 0;
  switch (s.type) {
    case ValueType::Enum:
      for (int i = 0; i < s.numNames; ++i) {
        if (text == s.names[i]) {
          out = i;
          return true;
        }
      }
      return false;
    case ValueType::Float: {
      if (!decimalGrammar(text)) return false;
      errno = 0;
      v = std::strtod(text.c_str(), nullptr);
      if (errno == ERANGE) return false;  // beyond double, or a denormal that lost its digits
      break;
    }
    case ValueType::Int:
    case ValueType::Count: {
      std::string digits = text;
      double mult = 1;
      if (s.type == ValueType::Count && !digits.empty()) {
        if (digits.back() == 'k' || digits.back() == 'K') mult = 1e3;
        if (digits.back() == 'M') mult = 1e6;
        if (mult > 1) digits.pop_back();
      }
      bool negative = false;
      if (s.type == ValueType::Int && !digits.empty() && digits[0] == '-') {
        negative = true;
        digits.erase(0, 1);
      }
      size_t i = 0;
      // 15 digits stay exact in a double, so nothing wraps on the way to the range check.
      const size_t n = digitsAt(digits, i);
      if (n == 0 || n > 15 || i != digits.size()) return false;
      v = std::strtod(digits.c_str(), nullptr) * mult * (negative ? -1.0 : 1.0);
      break;
    }
  }
  if (!allowed(s, v)) return false;
  out = v;
  return true;
}

std::string invalidValueMessage(const std::string& what, const std::string& text, const char* label,
                                const ValueSpec& s) {
  // Quoted when empty or spaced, so that the line shows what was typed.
  const bool quote = text.empty() || text.find_first_of(" \t") != std::string::npos;
  std::string tiny;
  if (s.type == ValueType::Float && decimalGrammar(text)) {
    const double v = std::strtod(text.c_str(), nullptr);
    if (v != 0 && std::fabs(v) < double(FLT_MIN)) tiny = " (and not below 1.2e-38, the smallest normal float)";
  }
  return what + " " + (quote ? "'" + text + "'" : text) + " is invalid: " + label + " must be " + allowedText(s) + tiny;
}

const std::vector<ParamDesc>& paramTable() {
  // key, option, label, unit, help, allowed values, field, panel slider range (equal ends: not
  // on the panel), logarithmic slider.
  //
  // Every number has an upper bound that keeps a step's change of velocity finite and meaningful
  // (an unbounded --alignment-scale 1e30 made |v|^2 overflow, and the speed clamp turned the
  // infinity into a standstill). The rule scales are per step: at 1 a rule applies its whole
  // correction in one step, and beyond it overshoots what the rule asks for. With these bounds a
  // velocity before the clamp stays below about 5e15 (s2 times 2^32 offsets of at most 1e6), whose
  // square is a finite float. Lengths stop at kMaxLength, where the float ulp of a position (1/16)
  // is still a third of the default step's move (maxSpeed dt = 0.2; from 2^21 on it would pass
  // it); the largest worlds made here (dense at 2^32 boids and 4 neighbours: a half-size of about
  // 4000, 1.5e5 in the plane) stay well inside.
  constexpr double kMaxLength = 1e6;
  static const std::vector<ParamDesc> table = {
      {"force", "--force", "force", "", "Force mode (default: the scenario's)", enumSpec<ForceMode>(),
       MURMUR_PARAM_FIELD(force), 0, 0, false},
      {"pipeline", "--pipeline", "pipeline", "", "Neighbour search / pair loop (default rows, an exact boids search over pruned rows of cells; with no --scenario verlet, exact per-boid neighbour lists with a skin, rebuilt every few steps; both run coherent for gravity)",
       enumSpec<Pipeline>(), MURMUR_PARAM_FIELD(pipeline), 0, 0, false},
      // A rule radius is at most the world's half-size (validateParams), so at most kMaxLength.
      {"boids.cohesionRadius", "--cohesion-radius", "cohesion r1", "world units",
       "Neighbours closer than this pull towards their centre", floatAbove(0, kMaxLength),
       MURMUR_PARAM_FIELD(boids.cohesionRadius), 0.5, 20, false},
      {"boids.separationRadius", "--separation-radius", "separation r2", "world units",
       "Neighbours closer than this push away", floatAbove(0, kMaxLength), MURMUR_PARAM_FIELD(boids.separationRadius),
       0.5, 20, false},
      {"boids.alignmentRadius", "--alignment-radius", "alignment r3", "world units",
       "Neighbours closer than this align velocities", floatAbove(0, kMaxLength),
       MURMUR_PARAM_FIELD(boids.alignmentRadius), 0.5, 20, false},
      // At 1 the whole offset to the neighbours' centre is added in one step; above, the pull
      // overshoots the centre.
      {"boids.cohesionScale", "--cohesion-scale", "cohesion s1", "1/step",
       "Fraction of the offset to the neighbours' centre added per step", floatAtLeast(0, 1),
       MURMUR_PARAM_FIELD(boids.cohesionScale), 0, 0.1, false},
      // At 1 each neighbour inside r2 pushes by its whole offset per step (a sum: n close
      // neighbours push n offsets); more pushes a pair further apart than it was close.
      {"boids.separationScale", "--separation-scale", "separation s2", "1/step",
       "Weight of the summed offsets away from close neighbours", floatAtLeast(0, 1),
       MURMUR_PARAM_FIELD(boids.separationScale), 0, 0.5, false},
      // reynolds, v += s3 (mean - v), takes the mean velocity itself at 1, overshoots it above and
      // diverges (held only by the clamp) above 2; cis565, v += s3 mean, adds a whole mean
      // velocity per step at 1, at least the flock's own speed.
      {"boids.alignmentScale", "--alignment-scale", "alignment s3", "1/step", "Weight of the mean neighbour velocity",
       floatAtLeast(0, 1), MURMUR_PARAM_FIELD(boids.alignmentScale), 0, 0.5, false},
      // The largest world's half-size per time unit; a step's move maxSpeed dt must also stay below
      // the world's half-size (validateParams). |v|^2 stays far from the float limit (3.4e38).
      {"boids.maxSpeed", "--max-speed", "max speed", "world units per time unit", "Velocities are clamped to this",
       floatAbove(0, kMaxLength), MURMUR_PARAM_FIELD(boids.maxSpeed), 0.05, 5, false},
      // The rules act per step, so dt only sets how far a step moves (checked against the world
      // with maxSpeed); 1000 is 5000 default steps in one.
      {"boids.dt", "--boids-dt", "boids dt", "time units", "Boids time step (--dt sets the active force's)",
       floatAbove(0, 1000), MURMUR_PARAM_FIELD(boids.dt), 0.01, 1, false},
      // The local rules of the rule table (core/rule_table.h), one name each; --rules is the old
      // spelling (optionAliases).
      {"boids.rules", "--rule", "rule", "", localRuleHelp().c_str(), enumSpec<RuleSet>(),
       MURMUR_PARAM_FIELD(boids.rules), 0, 0, false},
      // The Vicsek model (core/rules/vicsek.h). Its radius and speed are bounded as the boids' are.
      {"vicsek.radius", "--vicsek-radius", "vicsek radius r", "world units",
       "Vicsek: boids closer than this (the boid itself included) set the heading (--radius sets it too)",
       floatAbove(0, kMaxLength), MURMUR_PARAM_FIELD(vicsek.radius), 0.1, 10, true},
      {"vicsek.speed", "--vicsek-speed", "vicsek speed v0", "world units per time unit",
       "Vicsek: every boid's constant speed (--speed sets it too)", floatAbove(0, kMaxLength),
       MURMUR_PARAM_FIELD(vicsek.speed), 0.001, 2, true},
      // 2 pi turns the heading anywhere (angular); the bound is 2 pi rounded up to a number that
      // prints as it parses.
      {"vicsek.noise", "--vicsek-noise", "vicsek noise eta", "radians",
       "Vicsek: the noise amplitude, 0 to 2 pi (--noise sets it too)", floatAtLeast(0, 6.2832),
       MURMUR_PARAM_FIELD(vicsek.noise), 0, 6.283, false},
      {"vicsek.dt", "--vicsek-dt", "vicsek dt", "time units", "Vicsek time step (1 in the paper; --dt sets the active force's)",
       floatAbove(0, 1000), MURMUR_PARAM_FIELD(vicsek.dt), 0.1, 5, false},
      {"vicsek.noiseKind", "--vicsek-noise-kind", "noise kind", "",
       "Vicsek noise: angular (the heading turns by a random angle, Vicsek 1995) or vectorial (a random vector "
       "added to the sum of unit velocities, Gregoire & Chate 2004)",
       enumSpec<VicsekNoise>(), MURMUR_PARAM_FIELD(vicsek.noiseKind), 0, 0, false},
      // Couzin's zones (core/rules/couzin.h). The zones' sum is the reach, bounded as the boids'
      // radii are (kMaxLength each keeps r_a^2 finite).
      {"couzin.zoneRepulsion", "--zone-repulsion", "repulsion radius r_r", "world units",
       "Couzin: the radius of the zone of repulsion (0: none)", floatAtLeast(0, kMaxLength),
       MURMUR_PARAM_FIELD(couzin.zoneRepulsion), 0, 5, false},
      {"couzin.zoneOrientation", "--zone-orientation", "orientation width dr_o", "world units",
       "Couzin: the width of the zone of orientation beyond the zone of repulsion (0: none)",
       floatAtLeast(0, kMaxLength), MURMUR_PARAM_FIELD(couzin.zoneOrientation), 0, 20, false},
      {"couzin.zoneAttraction", "--zone-attraction", "attraction width dr_a", "world units",
       "Couzin: the width of the zone of attraction beyond the zone of orientation (0: none)",
       floatAtLeast(0, kMaxLength), MURMUR_PARAM_FIELD(couzin.zoneAttraction), 0, 30, false},
      {"couzin.fieldOfView", "--field-of-view", "field of perception", "degrees",
       "Couzin: the field of perception about the heading, 0 to 360 (the blind angle, 360 less it, is behind)",
       floatAbove(0, 360), MURMUR_PARAM_FIELD(couzin.fieldOfView), 10, 360, false},
      {"couzin.turnRate", "--turn-rate", "turning rate", "degrees per time unit",
       "Couzin: the largest turn per time unit (a step turns at most this times dt)", floatAbove(0, 1e6),
       MURMUR_PARAM_FIELD(couzin.turnRate), 0.5, 90, false},
      {"couzin.speed", "--couzin-speed", "couzin speed s", "world units per time unit",
       "Couzin: every body's constant speed (--speed sets it too)", floatAbove(0, kMaxLength),
       MURMUR_PARAM_FIELD(couzin.speed), 0.01, 5, true},
      {"couzin.noise", "--couzin-noise", "couzin noise sigma", "radians",
       "Couzin: the standard deviation of the Gaussian angular noise (--noise sets it too)", floatAtLeast(0, 6.2832),
       MURMUR_PARAM_FIELD(couzin.noise), 0, 1, false},
      {"couzin.dt", "--couzin-dt", "couzin dt", "time units", "Couzin time step (--dt sets the active force's)",
       floatAbove(0, 1000), MURMUR_PARAM_FIELD(couzin.dt), 0.05, 5, false},
      // Unit systems put G between 6.7e-11 (SI) and 39.5 (AU, years, solar masses); at 1e6 the
      // largest pull of a unit mass at the smallest softening (0.385 G m / eps^2 with eps = 1e-15)
      // is still a finite float.
      {"gravity.G", "--G", "G", "", "Gravitational constant (N-body units: 1)", floatAtLeast(0, 1e6),
       MURMUR_PARAM_FIELD(gravity.G), 0, 5, false},
      // At most the largest length: the gravity scenarios are a few units across, and eps^2 and
      // 1 / eps^3 stay normal floats.
      {"gravity.softening", "--softening", "softening", "length units",
       "Softening length eps: a = G m r / (r^2 + eps^2)^(3/2)", floatAbove(0, kMaxLength),
       MURMUR_PARAM_FIELD(gravity.softening), 0.001, 1, true},
      {"gravity.damping", "--damping", "damping", "per step", "Velocity factor per step of the euler integrator",
       floatAbove(0, 1), MURMUR_PARAM_FIELD(gravity.damping), 0.9, 1, false},
      // In N-body units a Plummer sphere's crossing time is about 1; 1000 (2e5 default steps)
      // leaves room for other units, not for a step past any orbit.
      {"gravity.dt", "--gravity-dt", "gravity dt", "time units", "Gravity time step (--dt sets the active force's)",
       floatAbove(0, 1000), MURMUR_PARAM_FIELD(gravity.dt), 0.0001, 0.05, true},
      {"gravity.integrator", "--integrator", "integrator", "", "Gravity integrator: kick-drift-kick or damped Euler",
       enumSpec<Integrator>(), MURMUR_PARAM_FIELD(gravity.integrator), 0, 0, false},
      {"gravity.gridDim", "--grid-dim", "grid cells/axis", "cells per axis", "Gravity grid cells per axis (grid pipelines)",
       intRange(1, kMaxGravityGridDim), MURMUR_PARAM_FIELD(gravity.gridDim), 1, 64, false},
      // Never larger than the bounding cube: the scenarios end within 15 scale lengths (a Plummer
      // sphere cut at 99% of its mass: 12 a), a few mean distances, so past 1e4 the cube (0) is
      // the one taken.
      {"gravity.gridSpread", "--grid-spread", "grid spread", "mean distances",
       "Gravity grid half-side in mean distances from the centre of mass (0 = bounding cube)", floatAtLeast(0, 1e4),
       MURMUR_PARAM_FIELD(gravity.gridSpread), 0, 10, false},
      // Above 1 a group could accept a node that overlaps it (core/tree.h, combineChildren).
      {"gravity.theta", "--theta", "tree theta", "",
       "Tree opening angle: smaller is more accurate and slower (tree pipeline)", floatAbove(0, 1),
       MURMUR_PARAM_FIELD(gravity.theta), 0.1, 1, false},
      {"gravity.treeLeafSize", "--tree-leaf-size", "tree leaf size", "bodies",
       "A node of at most this many bodies that must be opened is summed body by body (tree pipeline)",
       intRange(1, kMaxTreeLeafSize), MURMUR_PARAM_FIELD(gravity.treeLeafSize), 1, kMaxTreeLeafSize, false},
      {"halfSize", "--half-size", "world half-size", "world units", "Boids world half-size (cube [-h, h)); under --boundary open, where the bodies start",
       floatAbove(0, kMaxLength), MURMUR_PARAM_FIELD(halfSize), 0, 0, false},
      {"boundary", "--boundary", "boundary", "",
       "The world's faces: wrap (bodies re-enter at the opposite face, no neighbour across it), periodic (a torus: "
       "neighbours across the faces by the minimum image), reflect (walls: a body that reaches a face is mirrored "
       "back in and turns; no neighbour across it) or open (no box: the bodies go where they fly)",
       enumSpec<Boundary>(), MURMUR_PARAM_FIELD(boundary), 0, 0, false},
      {"dims", "--dims", "dimensions", "", "3: the cube; 2: the plane z = 0 (bodies and velocities in it)",
       intRange(2, 3), MURMUR_PARAM_FIELD(dims), 0, 0, false},
      {"cellWidthFactor", "--cell-width", "cell width", "rule radii",
       "Grid cell width in rule radii: 1 (27 cells searched) or 2 (8); a world with under an eighth of a body a cell widens its cells until the grid holds 8 cells a body", intRange(1, 2),
       MURMUR_PARAM_FIELD(cellWidthFactor), 1, 2, false},
      // Topological neighbours (core/topological.h): at most kMaxTopological, the lists' size.
      {"topological", "--topological", "topological K", "neighbours",
       "Each body follows its K nearest other bodies (ties by id) instead of everyone within the rule's radius: "
       "Vicsek sums them and itself, the boids rules each sum over them whatever their radii, Couzin's zones apply "
       "within them; 0: metric neighbours. No cutoff unless --radius (or --topological-radius) gives one",
       intRange(0, kMaxTopological), MURMUR_PARAM_FIELD(topological), 0, kMaxTopological, false},
      {"topologicalRadius", "--topological-radius", "topological cutoff", "world units",
       "With --topological: only the nearest closer than this count (0: no cutoff; --radius sets it too)",
       floatAtLeast(0, kMaxLength), MURMUR_PARAM_FIELD(topologicalRadius), 0, 50, false},
      {"listSteps", "--list-steps", "list steps", "steps",
       "Verlet pipeline: steps each neighbour list serves, 1..64 (0 = chosen by its cost model)",
       intRange(0, kMaxListSteps), MURMUR_PARAM_FIELD(listSteps), 0, 0, false},
      {"blockSize", "--block-size", "block size", "threads", "CUDA threads per block",
       intRange(kMinBlockSize, kMaxBlockSize, kBlockSizeStep), MURMUR_PARAM_FIELD(blockSize), kMinBlockSize,
       kMaxBlockSize, false},
  };
  return table;
}

const std::vector<OptionAlias>& optionAliases() {
  static const std::vector<OptionAlias> aliases = {{"--rules", "--rule"}};
  return aliases;
}

const ParamDesc* findParamByOption(const std::string& option) {
  std::string o = option;
  for (const OptionAlias& a : optionAliases())
    if (o == a.alias) o = a.option;
  for (const ParamDesc& d : paramTable())
    if (o == d.option) return &d;
  return nullptr;
}

const std::vector<SharedOption>& sharedOptions() {
  static const std::vector<SharedOption> options = {
      {"--radius", "radius",
       "The active rule's interaction radius (see --rule); with --topological K, the cutoff: the K nearest within it",
       &RuleInfo::radiusKey},
      {"--speed", "speed", "The active rule's speed: a constant speed, or the boids' top speed (see --rule)",
       &RuleInfo::speedKey},
      {"--noise", "noise", "The active rule's noise amplitude (see --rule)", &RuleInfo::noiseKey},
  };
  return options;
}

const ParamDesc* sharedOptionTarget(const SharedOption& o, const SimParams& p, std::string* why) {
  const RuleInfo& r = activeRule(p);
  const char* key = r.*(o.key);
  if (key) {
    const ParamDesc* d = findParam(key);
    if (!d) throw std::logic_error(std::string("rule table: ") + r.name + "'s " + o.what + " key " + key + " has no row");
    return d;
  }
  if (why) {
    std::string with;
    for (const RuleInfo& other : ruleTable())
      if (other.*(o.key)) with += std::string(with.empty() ? "" : ", ") + other.name;
    *why = std::string("the ") + r.name + " rule has no " + o.what + " (rules with one: " + (with.empty() ? "none" : with) +
           ")";
  }
  return nullptr;
}

const ParamDesc* findParam(const std::string& key) {
  for (const ParamDesc& d : paramTable())
    if (key == d.key) return &d;
  return nullptr;
}

std::string formatValue(const ParamDesc& d, double v) {
  if (d.spec.type == ValueType::Enum) return allowed(d.spec, v) ? d.spec.names[static_cast<int>(v)] : "?";
  return numberText(v);
}

}  // namespace murmur::core
