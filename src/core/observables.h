// Observables of a state (docs/observables.md): the order parameters of a flock and the
// conserved quantities of a gravitating system, computed by an engine on its own device
// (Engine::observe). The CPU engine's version (observeBodies, core/observables.cpp, OpenMP with
// double accumulation) is the reference the GPU is tested against.
//
// Every value is one row of MURMUR_OBSERVABLES below: its CSV column, the force it belongs to,
// whether it needs the flock count, whether it is derived from the first sample of a series
// (the drifts, which an engine alone cannot know), and what it means.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/grid.h"
#include "core/params.h"

namespace murmur::core {

// X(id, column, force, flocks, derived, meaning)
#define MURMUR_OBSERVABLES(X)                                                                                      \
  X(Polarization, "polarization", Boids, false, false, "|sum of unit velocities| / N: 1 when all boids fly alike") \
  X(MeanSpeed, "mean_speed", Boids, false, false, "mean |v|")                                                      \
  X(NearestDistance, "nn_distance", Boids, false, false,                                                           \
    "mean distance to the nearest other boid (not across the wrap; empty below 2 boids)")                          \
  X(NeighboursCohesion, "neighbours_cohesion", Boids, false, false, "mean other boids closer than the cohesion radius") \
  X(NeighboursSeparation, "neighbours_separation", Boids, false, false,                                            \
    "mean other boids closer than the separation radius")                                                          \
  X(NeighboursAlignment, "neighbours_alignment", Boids, false, false,                                              \
    "mean other boids closer than the alignment radius")                                                           \
  X(Flocks, "flocks", Boids, true, false,                                                                          \
    "connected components of the graph of boids closer than the cohesion radius (singletons count)")              \
  X(LargestFlockShare, "largest_flock_share", Boids, true, false, "the largest flock's boids / N")                  \
  X(Flocks1, "flocks_1", Boids, true, false, "flocks of 1 boid (isolated boids)")                                   \
  X(Flocks2to9, "flocks_2_9", Boids, true, false, "flocks of 2 to 9 boids")                                         \
  X(Flocks10to99, "flocks_10_99", Boids, true, false, "flocks of 10 to 99 boids")                                   \
  X(Flocks100to999, "flocks_100_999", Boids, true, false, "flocks of 100 to 999 boids")                             \
  X(Flocks1000Plus, "flocks_1000_plus", Boids, true, false, "flocks of 1000 boids or more")                         \
  X(Milling, "milling", Boids, true, false,                                                                        \
    "per flock |sum (r - c) x v| / sum |r - c| |v| about its centre c; the boid-weighted mean over flocks of at "   \
    "least ObserveRequest::millingMinSize boids (empty when there are none)")                                     \
  X(Mass, "mass", Gravity, false, false, "M = sum m")                                                            \
  X(Kinetic, "kinetic", Gravity, false, false, "K = sum m v^2 / 2")                                                \
  X(Potential, "potential", Gravity, false, false,                                                                 \
    "W = -G sum_{i<j} m_i m_j / sqrt(r^2 + eps^2), exact all pairs up to ObserveRequest::potentialMaxN bodies "    \
    "(empty beyond)")                                                                                              \
  X(TotalEnergy, "total_energy", Gravity, false, false, "E = K + W")                                               \
  X(EnergyDrift, "energy_drift", Gravity, false, true, "(E - E_0) / |E_0|, E_0 of the first sample")               \
  X(VirialRatio, "virial_ratio", Gravity, false, false, "2K / |W| (1 in equilibrium)")                             \
  X(Lagrange10, "lagrange_r10", Gravity, false, false, "radius about the centre of mass holding 10% of the mass") \
  X(Lagrange50, "lagrange_r50", Gravity, false, false, "radius holding 50% of the mass")                           \
  X(Lagrange90, "lagrange_r90", Gravity, false, false, "radius holding 90% of the mass")                           \
  X(ComX, "com_x", Gravity, false, false, "centre of mass")                                                        \
  X(ComY, "com_y", Gravity, false, false, "centre of mass")                                                        \
  X(ComZ, "com_z", Gravity, false, false, "centre of mass")                                                        \
  X(MomentumX, "momentum_x", Gravity, false, false, "P = sum m v")                                                 \
  X(MomentumY, "momentum_y", Gravity, false, false, "P = sum m v")                                                 \
  X(MomentumZ, "momentum_z", Gravity, false, false, "P = sum m v")                                                 \
  X(AngularMomentumX, "angular_momentum_x", Gravity, false, false, "L = sum m r x v about the origin")             \
  X(AngularMomentumY, "angular_momentum_y", Gravity, false, false, "L = sum m r x v about the origin")             \
  X(AngularMomentumZ, "angular_momentum_z", Gravity, false, false, "L = sum m r x v about the origin")             \
  X(ComDrift, "com_drift", Gravity, false, true, "|R - R_0 - (P_0 / M)(t - t_0)|: the centre of mass off its straight line") \
  X(MomentumDrift, "momentum_drift", Gravity, false, true, "|P - P_0| / (M sqrt(2 K_0 / M)): momentum change per unit of rms speed") \
  X(AngularMomentumDrift, "angular_momentum_drift", Gravity, false, true, "|L - L_0| / |L_0| (empty when L_0 = 0)")

enum class Obs {
#define MURMUR_OBS_ENUM(id, column, force, flocks, derived, meaning) id,
  MURMUR_OBSERVABLES(MURMUR_OBS_ENUM)
#undef MURMUR_OBS_ENUM
};
constexpr int kObsCount = 0
#define MURMUR_OBS_COUNT(id, column, force, flocks, derived, meaning) +1
    MURMUR_OBSERVABLES(MURMUR_OBS_COUNT)
#undef MURMUR_OBS_COUNT
    ;

struct ObservableDesc {
  Obs id;
  const char* column;
  ForceMode force;
  bool flocks;   // needs ObserveRequest::flocks
  bool derived;  // filled by ObservablesSeries from the first sample, not by the engine
  const char* meaning;
};

// Every observable, in the order of Obs (the CSV's column order).
const std::vector<ObservableDesc>& observableTable();
const ObservableDesc& observableDesc(Obs o);

// What to compute. The scalar values are cheap (a few passes over the state, one neighbour
// search); the flock count adds a connected-components pass, and gravity's potential is all pairs.
struct ObserveRequest {
  bool flocks = false;            // boids: the flock columns (connected components)
  uint32_t millingMinSize = 10;   // flocks smaller than this are left out of `milling`
  size_t potentialMaxN = 262144;  // gravity: the exact potential up to this many bodies, else empty
};

// The values of one state; NaN where a value was not computed (an empty CSV cell).
struct Observables {
  double value[kObsCount];
  Observables() {
    for (double& v : value) v = std::nan("");
  }
  double& operator[](Obs o) { return value[static_cast<int>(o)]; }
  double operator[](Obs o) const { return value[static_cast<int>(o)]; }
  bool has(Obs o) const { return !std::isnan((*this)[o]); }
};

// The columns a run of this force writes (flocks: with the flock columns): the table's order.
std::vector<Obs> observedColumns(ForceMode force, bool flocks);

// The grid both engines search for the boids observables: the world (not across the wrap) at cell
// width = the largest rule radius, or a whole multiple of it where that grid would have more than
// max(4 N, 2^21) cells (a sparse, huge world), so that its cell arrays stay small.
GridSpec observablesGrid(const SimParams& p, size_t n);

// A cumulative mass within this factor of a Lagrangian radius' fraction counts as reaching it.
constexpr double kLagrangeSlack = 1.0 - 1e-9;

// The reference implementation (the CPU engine's): `b` in any order. Boids use the boids grid of
// `p` at cell width 1 (the rule radii, not across the wrap: docs/design.md#the-boundary-rule);
// gravity uses G and the softening of `p`. Parallel over bodies (OpenMP), sums in double.
Observables observeBodies(const std::vector<Vec4>& pos, const std::vector<Vec4>& vel, const SimParams& p,
                          const ObserveRequest& r);
// The flock sizes of the state, largest first (the components observeBodies counts).
std::vector<uint32_t> flockSizes(const std::vector<Vec4>& pos, const SimParams& p);

// Fills the size-distribution columns (flocks_1 ... flocks_1000_plus) from a flock's size.
inline Obs flockSizeBin(uint64_t size) {
  return size < 2 ? Obs::Flocks1 : size < 10 ? Obs::Flocks2to9 : size < 100 ? Obs::Flocks10to99
         : size < 1000 ? Obs::Flocks100to999 : Obs::Flocks1000Plus;
}

// A series of samples of one run: the first sample is the baseline of the derived columns
// (energy drift, centre-of-mass, momentum and angular-momentum drifts).
class ObservablesSeries {
 public:
  // Fills the derived values of `o` (sampled at `time`) and returns it.
  Observables add(Observables o, double time);
  bool started() const { return started_; }

 private:
  bool started_ = false;
  Observables first_;
  double t0_ = 0;
};

}  // namespace murmur::core
