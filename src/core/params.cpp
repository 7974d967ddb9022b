#include "core/params.h"

#include <cmath>
#include <sstream>

#include "core/param_table.h"
#include "core/pipeline_table.h"
#include "core/row_search.h"
#include "core/rule_table.h"
#include "core/verlet.h"

namespace murmur::core {

SimParams defaultParams() {
  SimParams p{};
  p.pipeline = defaultPipeline();  // the pipeline table's kDefaultPipeline row
  p.boids.cohesionRadius = 5.0f;
  p.boids.separationRadius = 3.0f;
  p.boids.alignmentRadius = 5.0f;
  p.boids.cohesionScale = 0.01f;
  p.boids.separationScale = 0.1f;
  p.boids.alignmentScale = 0.1f;
  p.boids.maxSpeed = 1.0f;
  p.boids.dt = 0.2f;
  // Vicsek 1995's particles: r = 1, v0 = 0.03, dt = 1; eta 0.5 is well inside the ordered phase
  // at the paper's densities.
  p.vicsek.radius = 1.0f;
  p.vicsek.speed = 0.03f;
  p.vicsek.noise = 0.5f;
  p.vicsek.dt = 1.0f;
  p.vicsek.noiseKind = VicsekNoise::Angular;
  // Couzin et al. 2002's individuals (r_r = 1, dr_a = 14, a field of perception of 270 degrees,
  // 40 degrees a second at a speed of 3 with steps of 0.1 s, sigma = 0.05) with one time unit a
  // step of theirs: 4 degrees and 0.3 units a step. dr_o = 2 lies between their swarm and parallel
  // groups.
  p.couzin.zoneRepulsion = 1.0f;
  p.couzin.zoneOrientation = 2.0f;
  p.couzin.zoneAttraction = 14.0f;
  p.couzin.fieldOfView = 270.0f;
  p.couzin.turnRate = 4.0f;
  p.couzin.speed = 0.3f;
  p.couzin.noise = 0.05f;
  p.couzin.dt = 1.0f;
  p.gravity.G = 1.0f;
  p.gravity.softening = 0.05f;
  p.gravity.damping = 1.0f;
  p.gravity.dt = 0.005f;
  p.gravity.integrator = Integrator::Leapfrog;
  p.gravity.gridDim = 16;
  p.gravity.gridSpread = 2.5f;
  p.gravity.theta = 0.5f;
  p.gravity.treeLeafSize = 16;
  p.halfSize = 100.0f;
  p.seed = 1;  // the scenarios' default seed (core/scenarios.h ScenarioSpec)
  p.cellWidthFactor = 1;
  p.dims = 3;
  p.blockSize = 256;
  p.listSteps = 0;
  selectRule(p, defaultRule());  // its force, and for a local rule its rule set
  return p;
}

std::string validateParams(const SimParams& p) {
  for (const ParamDesc& d : paramTable()) {
    const double v = d.get(p);
    if (!allowed(d.spec, v))
      return std::string(d.key) + " = " + formatValue(d, v) + " is invalid: " + d.label + " must be " +
             allowedText(d.spec);
  }
  // The rules that tie fields together.
  std::ostringstream e;
  const GravityParams& g = p.gravity;
  if (!(g.softening * g.softening > 1e-30f)) {
    // The self pair divides by eps^2 (r = 0): its square must stay a normal float.
    e << "--softening " << g.softening << " is invalid: softening must be at least 1e-15 (gravity.softening in a --params file)";
    return e.str();
  }
  if (runsLocalRule(p) && p.boids.rules == RuleSet::Couzin && !(searchRadius(p) > 0.0f)) {
    e << "--zone-repulsion " << p.couzin.zoneRepulsion << ", --zone-orientation " << p.couzin.zoneOrientation
      << " and --zone-attraction " << p.couzin.zoneAttraction
      << " are invalid together: the zones are all empty; at least one must be more than 0 (couzin.zoneRepulsion, "
         "couzin.zoneOrientation and couzin.zoneAttraction in a --params file)";
    return e.str();
  }
  // An open world has no box: the half-size only places the start (core/open_world.h).
  const bool open = p.boundary == Boundary::Open;
  if (!open && searchRadius(p) > p.halfSize) {
    e << "--half-size " << p.halfSize << " is invalid: the world half-size must be at least the largest rule radius ("
      << searchRadius(p) << "; halfSize and " << (activeRule(p).radiusKey ? activeRule(p).radiusKey : "boids.*Radius")
      << " in a --params file)";
    return e.str();
  }
  // A boid moves at most maxSpeed dt per step. The wrap brings a body that crossed a face back by
  // one world width (physics.h wrapCoord), and the verlet lists' images assume the same: a move
  // of half the world or more would leave bodies outside it.
  if (!open && runsLocalRule(p) && !(double(localMaxSpeed(p)) * double(localDt(p)) < double(p.halfSize))) {
    const RuleInfo& r = activeRule(p);
    const ParamDesc* speed = r.speedKey ? findParam(r.speedKey) : nullptr;
    const ParamDesc* dt = r.dtKey ? findParam(r.dtKey) : nullptr;
    e << (speed ? speed->option : "the speed") << " " << localMaxSpeed(p) << " is invalid with a " << r.name
      << " time step of " << localDt(p) << ": a boid would move up to " << double(localMaxSpeed(p)) * double(localDt(p))
      << " per step, which must stay below the world half-size " << p.halfSize << " ("
      << (speed ? speed->option : "") << ", " << (dt ? dt->option : "") << ", --half-size; " << (speed ? speed->key : "")
      << ", " << (dt ? dt->key : "") << " and halfSize in a --params file)";
    return e.str();
  }
  // A torus: a neighbour is found through one image of a body only while the world is more than
  // twice the reach (and the verlet lists' reach) wide.
  if (p.boundary == Boundary::Periodic && !periodicFits(p, verletRadius(p, 1))) {
    e << "--boundary periodic needs a world half-size of at least " << periodicMinHalfSize(verletRadius(p, 1))
      << " with rule radius " << searchRadius(p) << " (it is " << p.halfSize
      << "; a larger --half-size or a smaller radius)";
    return e.str();
  }
  if (p.topological > 0 && !runsLocalRule(p))
    return "--topological " + std::to_string(p.topological) + " applies to the local rules only (this run: " +
           toString(p.force) + ")";
  if (p.topological > 0 && p.pipeline != Pipeline::Rows)
    return "--topological " + std::to_string(p.topological) + " runs on the rows pipeline (its grid search grows " +
           "shell by shell until the K nearest are certain), not --pipeline " + toString(p.pipeline);
  if (runsLocalRule(p) && !pipelineInfo(p.pipeline).boids)
    return std::string("pipeline tree: ") + gravityOnlyMessage();
  // Lists that serve several steps hold pairs across the wrap; a world too narrow for that could
  // only rebuild every step, which is not what was asked for.
  if (runsLocalRule(p) && pipelineInfo(p.pipeline).lists && p.listSteps > 1 &&
      !verletPeriodicFits(p, verletRadius(p, p.listSteps))) {
    e << "--list-steps " << p.listSteps << " is invalid here: lists that serve " << p.listSteps
      << " steps need a world half-size of at least " << verletMinHalfSize(p, verletRadius(p, p.listSteps))
      << " (it is " << p.halfSize << "; fewer steps, a larger world, or 0 to let the skin decide)";
    return e.str();
  }
  return {};
}

// The active rule's time step: its row of the rule table names the parameter.
static const ParamDesc& activeDtRow(const SimParams& p) {
  const RuleInfo& r = activeRule(p);
  const ParamDesc* d = r.dtKey ? findParam(r.dtKey) : nullptr;
  if (!d) throw std::logic_error(std::string("rule table: ") + r.name + " names no time step");
  return *d;
}
float activeDt(const SimParams& p) { return static_cast<float>(activeDtRow(p).get(p)); }
void setActiveDt(SimParams& p, float dt) { activeDtRow(p).set(p, dt); }

bool forceFieldChanged(const SimParams& a, const SimParams& b) {
  return a.force != b.force || a.pipeline != b.pipeline || a.cellWidthFactor != b.cellWidthFactor ||
         a.gravity.G != b.gravity.G || a.gravity.softening != b.gravity.softening ||
         a.gravity.gridDim != b.gravity.gridDim || a.gravity.gridSpread != b.gravity.gridSpread ||
         a.gravity.integrator != b.gravity.integrator || a.gravity.theta != b.gravity.theta ||
         a.gravity.treeLeafSize != b.gravity.treeLeafSize;
}

}  // namespace murmur::core
