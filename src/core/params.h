// Simulation parameters: one plain struct, one defaults function, one validator. What each field
// means, its unit and its allowed values are written once, in the table of core/param_table.h;
// the fields here carry the same words for a reader of the physics. Engines take SimParams by
// value per step (the CUDA engine passes the parts a kernel needs as kernel arguments).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace murmur::core {

enum class ForceMode : int { Boids = 0, Gravity = 1 };
// Rows: the exact fast boids search of core/row_search.h (gravity runs the coherent grid there).
// Tree: Barnes-Hut over a radix tree built every step (core/tree.h); gravity only.
// Clusters: cluster pairs, 8 bodies by 4 candidates per warp instruction (core/cluster_search.h).
enum class Pipeline : int { Naive = 0, Scattered = 1, Coherent = 2, Rows = 3, Tree = 4, Verlet = 5, Clusters = 6 };
enum class EngineKind : int { Cpu = 0, Cuda = 1 };
// Cis565: alignment adds (mean v_j) * s3. Reynolds: alignment steers, (mean v_j - v_i) * s3.
// Vicsek: the Vicsek model (core/rules/vicsek.h), VicsekParams. Couzin: Couzin's zones
// (core/rules/couzin.h), CouzinParams.
enum class RuleSet : int { Cis565 = 0, Reynolds = 1, Vicsek = 2, Couzin = 3 };
// The Vicsek model's noise: angular (Vicsek 1995, the heading turned by a random angle) or
// vectorial (Gregoire and Chate 2004, a random vector added to the sum of unit velocities).
enum class VicsekNoise : int { Angular = 0, Vectorial = 1 };
// The world's faces (docs/design.md#the-boundary-rule). Wrap: a body that leaves through a face
// re-enters at the opposite one, and no neighbour search crosses a face. Periodic: a torus, whose
// searches cross the faces by the minimum image. Reflect: walls. Open: no box at all (the
// half-size only says where the bodies start; core/open_world.h).
enum class Boundary : int { Wrap = 0, Periodic = 1, Reflect = 2, Open = 3 };
// Leapfrog: kick-drift-kick, symplectic. DampedEuler: v = damping (v + a dt); p += v dt.
enum class Integrator : int { Leapfrog = 0, DampedEuler = 1 };

// The names of an enum's values, in value order: the one spelling used by the command line, the
// JSON files, the CSV columns and the panel. A new value is one more name here.
template <typename EnumT>
struct EnumNames;
template <>
struct EnumNames<ForceMode> {
  static constexpr const char* names[] = {"boids", "gravity"};
};
template <>
struct EnumNames<Pipeline> {
  static constexpr const char* names[] = {"naive", "scattered", "coherent", "rows", "tree", "verlet", "clusters"};
};
template <>
struct EnumNames<EngineKind> {
  static constexpr const char* names[] = {"cpu", "cuda"};
};
template <>
struct EnumNames<RuleSet> {
  static constexpr const char* names[] = {"cis565", "reynolds", "vicsek", "couzin"};
};
template <>
struct EnumNames<VicsekNoise> {
  static constexpr const char* names[] = {"angular", "vectorial"};
};
template <>
struct EnumNames<Boundary> {
  static constexpr const char* names[] = {"wrap", "periodic", "reflect", "open"};
};
template <>
struct EnumNames<Integrator> {
  static constexpr const char* names[] = {"leapfrog", "euler"};
};

template <typename EnumT>
constexpr int enumCount() {
  return static_cast<int>(sizeof(EnumNames<EnumT>::names) / sizeof(EnumNames<EnumT>::names[0]));
}

// "?" for a value outside the enum (a corrupt or uninitialised field), never out of bounds.
template <typename EnumT>
const char* toString(EnumT v) {
  const int i = static_cast<int>(v);
  return i >= 0 && i < enumCount<EnumT>() ? EnumNames<EnumT>::names[i] : "?";
}

// Parses a lower-case name; false when unknown (out untouched).
template <typename EnumT>
bool parse(const std::string& s, EnumT& out) {
  for (int i = 0; i < enumCount<EnumT>(); ++i) {
    if (s == EnumNames<EnumT>::names[i]) {
      out = static_cast<EnumT>(i);
      return true;
    }
  }
  return false;
}

struct BoidParams {
  float cohesionRadius;    // r1, world units: neighbours closer than this pull towards their centre
  float separationRadius;  // r2, world units: neighbours closer than this push away
  float alignmentRadius;   // r3, world units: neighbours closer than this align velocities
  float cohesionScale;     // s1, 1/step: fraction of the offset to the centre added per step
  float separationScale;   // s2, 1/step: weight of the summed offsets away from close neighbours
  float alignmentScale;    // s3, 1/step: weight of the mean neighbour velocity
  float maxSpeed;          // world units per time unit; velocities are clamped to this length
  float dt;                // time units per step
  RuleSet rules;
};

// The Vicsek model (core/rules/vicsek.h).
struct VicsekParams {
  float radius;           // r, world units: boids closer than this (the boid itself included) set the heading
  float speed;            // v0, world units per time unit: every boid's constant speed
  float noise;            // eta, radians (0 to 2 pi): the noise's amplitude (noiseKind says how it acts)
  float dt;               // time units per step (1 in the paper)
  VicsekNoise noiseKind;
};

// Couzin's zones (core/rules/couzin.h): repulsion within zoneRepulsion, orientation in the next
// zoneOrientation, attraction in the zoneAttraction beyond (a width of 0: no such zone).
struct CouzinParams {
  float zoneRepulsion;    // r_r, world units: the radius of the zone of repulsion
  float zoneOrientation;  // dr_o, world units: the width of the zone of orientation
  float zoneAttraction;   // dr_a, world units: the width of the zone of attraction
  float fieldOfView;      // degrees (0 to 360): the field of perception; the blind angle is behind
  float turnRate;         // degrees per time unit: the largest turn is turnRate dt a step
  float speed;            // s, world units per time unit: every body's constant speed
  float noise;            // sigma, radians: the standard deviation of the Gaussian angular noise
  float dt;               // time units per step
};

struct GravityParams {
  float G;          // gravitational constant (N-body units: G = 1)
  float softening;  // eps, length units: a = G m r / (|r|^2 + eps^2)^(3/2)
  float damping;    // velocity factor per step for the DampedEuler integrator (1 = none)
  float dt;         // time units per step
  Integrator integrator;
  int gridDim;      // cells per axis of the particle-cell grid (grid pipelines)
  float gridSpread; // grid half-side = min(bounding box, gridSpread x mean distance from the centre
                    // of mass); 0 = the bounding cube (see core/grid.h)
  float theta;      // tree opening angle, dimensionless, (0, 1]: a node of side l is opened when a
                    // body group comes closer than l / theta (+ its centre-of-mass offset)
  int treeLeafSize; // tree: a node of at most this many bodies that must be opened is summed
                    // body by body instead of descending further, 1..64
};

struct SimParams {
  ForceMode force;
  Pipeline pipeline;
  BoidParams boids;
  GravityParams gravity;
  VicsekParams vicsek;
  CouzinParams couzin;
  float halfSize;       // boids world is the cube [-halfSize, halfSize)^3, wrapped at the faces
  Boundary boundary;    // what the faces do to a local rule's neighbour search (Boundary)
  int dims;             // 3, or 2: a plane (every body at z = 0 with vz = 0, which the forces keep),
                        // its grids one cell deep: a search visits 9 cells (or 4), not 27 (or 8)
  int cellWidthFactor;  // boids grid cell width = factor * largest rule radius; 1 (27 cells) or 2 (8)
  int blockSize;        // CUDA threads per block: 32..1024, multiple of 32
  int topological;         // > 0: the local rule sums over each body's K nearest (core/topological.h)
  float topologicalRadius;  // with topological: only neighbours closer than this (0: no cutoff)
  int listSteps;        // verlet pipeline: steps each neighbour list serves, 0 = from the cost
                        // model (core/verlet.h)
  uint64_t seed;        // the run's seed (--seed): the scenario's bodies and every random draw of a
                        // rule (core/random.h: a draw is keyed on the seed, the body's id and the step)
};

SimParams defaultParams();

// Empty string when valid, otherwise one line naming the field, the value and what is allowed:
// every field against its row of the parameter table, then the rules that tie fields together.
std::string validateParams(const SimParams& p);

// True when going from `a` to `b` changes the force field of the current positions, so that an
// acceleration computed under `a` (the leapfrog keeps one between steps) no longer holds. Both
// engines ask this one rule; it may say true for a change that is harmless (cell width), never
// false for one that is not.
bool forceFieldChanged(const SimParams& a, const SimParams& b);

// The world's measure (volume, or area in 2D), a cell's of width w and a ball's of radius r (a
// disc in 2D): the densities that size grids, lists and the `dense` world.
inline double worldMeasure(const SimParams& p) {
  const double s = 2.0 * double(p.halfSize);
  return p.dims == 2 ? s * s : s * s * s;
}
inline double cellMeasure(const SimParams& p, double w) { return p.dims == 2 ? w * w : w * w * w; }
inline double ballMeasure(const SimParams& p, double r) {
  constexpr double kPi = 3.14159265358979323846;
  return p.dims == 2 ? kPi * r * r : 4.0 / 3.0 * kPi * r * r * r;
}

// The active force mode's time step: the local rules' or gravity's (core/rule_table.h says which
// p runs).
float activeDt(const SimParams& p);
void setActiveDt(SimParams& p, float dt);

// Every pipeline, in the order of their names (and number keys): reports iterate over this, so a
// new pipeline appears in them by being a new name.
inline std::vector<Pipeline> allPipelines() {
  std::vector<Pipeline> all;
  for (int i = 0; i < enumCount<Pipeline>(); ++i) all.push_back(static_cast<Pipeline>(i));
  return all;
}

// The pipelines with a gravity method of their own (core/pipeline_table.h, pipelinesFor): rows
// and verlet run the coherent grid for gravity, so reports and sweeps that cover gravity measure
// it once, as coherent.
std::vector<Pipeline> gravityPipelines();

constexpr int kMinBlockSize = 32;
constexpr int kMaxBlockSize = 1024;
// Block sizes are whole warps.
constexpr int kBlockSizeStep = 32;
constexpr int kMaxGravityGridDim = 128;
constexpr int kMaxTreeLeafSize = 64;
// The verlet pipeline reuses a neighbour list for at most this many steps (core/verlet.h).
constexpr int kMaxListSteps = 64;

}  // namespace murmur::core
