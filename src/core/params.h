// Simulation parameters: one plain struct, one defaults function, one validator.
// The CUDA engine copies SimParams as-is into __constant__ memory, so it stays a POD.
#pragma once

#include <cstdint>
#include <string>

namespace murmur::core {

enum class ForceMode : int { Boids = 0, Gravity = 1 };
// Tree: Barnes-Hut over a radix tree built every step (core/tree.h); gravity only.
enum class Pipeline : int { Naive = 0, Scattered = 1, Coherent = 2, Tree = 3 };
enum class EngineKind : int { Cpu = 0, Cuda = 1 };
// Cis565: alignment adds (mean v_j) * s3. Reynolds: alignment steers, (mean v_j - v_i) * s3.
enum class RuleSet : int { Cis565 = 0, Reynolds = 1 };
// Leapfrog: kick-drift-kick, symplectic. DampedEuler: v = damping (v + a dt); p += v dt.
enum class Integrator : int { Leapfrog = 0, DampedEuler = 1 };

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
  float halfSize;       // boids world is the cube [-halfSize, halfSize)^3, wrapped at the faces
  int cellWidthFactor;  // boids grid cell width = factor * largest rule radius; 1 (27 cells) or 2 (8)
  int blockSize;        // CUDA threads per block: 32..1024, multiple of 32
  bool profile;         // fill StepProfile per step (CUDA events / CPU clocks); off = no overhead
};

SimParams defaultParams();

// Empty string when valid, otherwise one line naming the field, the value and what is allowed.
std::string validateParams(const SimParams& p);

// Largest of the three boid rule radii: the neighbour search radius.
inline float maxRuleRadius(const BoidParams& b) {
  float r = b.cohesionRadius > b.separationRadius ? b.cohesionRadius : b.separationRadius;
  return r > b.alignmentRadius ? r : b.alignmentRadius;
}

// The active force mode's time step.
inline float activeDt(const SimParams& p) {
  return p.force == ForceMode::Boids ? p.boids.dt : p.gravity.dt;
}

const char* toString(ForceMode v);
const char* toString(Pipeline v);
const char* toString(EngineKind v);
const char* toString(RuleSet v);
const char* toString(Integrator v);
// Parse a lower-case name; false when unknown (out untouched).
bool parse(const std::string& s, ForceMode& out);
bool parse(const std::string& s, Pipeline& out);
bool parse(const std::string& s, EngineKind& out);
bool parse(const std::string& s, RuleSet& out);
bool parse(const std::string& s, Integrator& out);

constexpr int kMinBlockSize = 32;
constexpr int kMaxBlockSize = 1024;
constexpr int kMaxGravityGridDim = 128;
constexpr int kMaxTreeLeafSize = 64;
// Why `tree` refuses boids: what a tree buys is a far field summarised by multipoles, and boids
// have none (every rule is a short-range neighbour sum, which the grids find exactly).
constexpr const char* kTreeBoidsMessage =
    "gravity only: boids have no far field to approximate (use naive, scattered or coherent)";

}  // namespace murmur::core
