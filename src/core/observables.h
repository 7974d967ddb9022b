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
#include "core/boundary.h"
#include "core/grid.h"
#include "core/params.h"

namespace murmur::core {

// X(id, column, force, flocks, derived, meaning)
#define MURMUR_OBSERVABLES(X)                                                                                      \
  X(Polarization, "polarization", Boids, false, false, "|sum of unit velocities| / N: 1 when all boids fly alike") \
  X(MeanSpeed, "mean_speed", Boids, false, false, "mean |v|")                                                      \
  X(NearestDistance, "nn_distance", Boids, false, false,                                                           \
    "mean distance to the nearest other boid (through the faces by the minimum image under the periodic boundary " \
    "only; empty below 2 boids)")                                                                                  \
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
  X(GroupPolarization, "group_polarization", Boids, false, false,                                                 \
    "Couzin's p_group: |sum of unit velocities| / N, polarization's formula; open and walled worlds only "        \
    "(empty under wrap and periodic: groupObservablesApply)")                                                     \
  X(GroupRotation, "group_rotation", Boids, false, false,                                                          \
    "Couzin's m_group: |sum unit(r - c) x unit(v)| / N about the centroid c of all boids (1: a rigid mill about " \
    "c); open and walled worlds only")                                                                            \
  X(GroupAngularMomentum, "group_angular_momentum", Boids, false, false,                                           \
    "|sum (r - c) x v| / N about the centroid c of all boids; open and walled worlds only")                      \
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

// The group columns (group_polarization, group_rotation, group_angular_momentum) measure the
// boids as one group about their centroid, the plain mean of every position. A wrapped position
// has no such centroid (a group across a face would be centred in the middle of the world), so
// they are computed under every boundary but wrap and periodic: walls, and any boundary that
// leaves positions where they are. Elsewhere their cells are empty.
constexpr bool groupObservablesApply(Boundary b) { return b != Boundary::Wrap && b != Boundary::Periodic; }

// One boid's terms of group_rotation and group_angular_momentum about the centroid c, in double,
// as both engines add them: with r = p - c, rot += unit(r) x unit(v) and ang += r x v, a unit
// vector 0 where its vector is 0.
MURMUR_HD void addGroupSpin(const Vec4& p, const Vec4& v, const double (&c)[3], double* rot, double* ang) {
  const double rx = p.x - c[0], ry = p.y - c[1], rz = p.z - c[2];
  const double vx = v.x, vy = v.y, vz = v.z;
  ang[0] += ry * vz - rz * vy, ang[1] += rz * vx - rx * vz, ang[2] += rx * vy - ry * vx;
  const double r = sqrt(rx * rx + ry * ry + rz * rz), s = sqrt(vx * vx + vy * vy + vz * vz);
  if (r > 0 && s > 0) {
    const double k = 1.0 / (r * s);
    rot[0] += (ry * vz - rz * vy) * k, rot[1] += (rz * vx - rx * vz) * k, rot[2] += (rx * vy - ry * vx) * k;
  }
}

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

// The radii the boids observables measure with: the boids rules' own (the neighbour columns are
// named after them; the flock graph joins boids closer than the cohesion radius); under a rule of
// one radius (vicsek) every one of them is that radius.
BoidParams observedBoidParams(const SimParams& p);

// The columns a run of this force writes (flocks: with the flock columns): the table's order.
std::vector<Obs> observedColumns(ForceMode force, bool flocks);

// The grid both engines search for the boids observables: the world at cell width = the largest
// rule radius, or a whole multiple of it where that grid would have more than max(4 N, 2^21)
// cells (a sparse, huge world), so that its cell arrays stay small. Under the periodic boundary
// the cells are widened a little to a whole number of them across the world, so that the
// nearest-neighbour search's shells wrap around the faces with no narrower cell between.
GridSpec observablesGrid(const SimParams& p, size_t n);

// The periodic boundary (docs/observables.md#the-periodic-boundary), shared by both engines so
// that they measure alike. A pair's offset is taken by the minimum image: an offset component
// beyond half the world's width L = 2 halfSize is shifted by L.


// The same for one coordinate offset in double (flock centres): d within [-L, L] shifted by L
// where it is beyond half of it.
MURMUR_HD double minimumImage(double d, float halfSize) {
  const double h = halfSize, L = 2.0 * h;
  return d > h ? d - L : (d < -h ? d + L : d);
}

// A flock's centre under the periodic boundary, per axis: each coordinate x is an angle on the
// circle of the axis (pi x / halfSize, in [-pi, pi)); the circular mean of a flock's angles
// (atan2 of the sums of their sines and cosines) is the reference c0 from which each boid is
// taken at its minimum image, c0 + minimumImage(x - c0); the centre is the plain mean of those
// images. A flock less than half the world wide along an axis has all its images within half a
// width of c0, so its centre is the mean of the flock unwrapped, wherever it lies on the torus
// (the same as in the middle of the world); no ordering of the boids enters (both engines take
// the same images), and a flock wrapped all the way around an axis still gets one centre.
MURMUR_HD double periodicAngle(float x, float halfSize) {
  return double(x) * (3.14159265358979323846 / double(halfSize));
}
MURMUR_HD double circularMean(double sumSin, double sumCos, float halfSize) {
  return atan2(sumSin, sumCos) * (double(halfSize) / 3.14159265358979323846);
}

// The nearest-neighbour search under the periodic boundary (on the grid observablesGrid gives)
// visits shells of cells around the torus. Shell k: the cells at Chebyshev distance exactly k
// from cell c counted either way around, per axis the offsets from -(d - 1) / 2 to d / 2 of its d
// cells (each cell once), f(cx, cy, cz) with the coordinates wrapped into the grid; a plane's one
// cell along z at offset 0 only. Shell periodicShellReach(dims) is the last that holds a cell.
MURMUR_HD int periodicShellReach(const Int3& dims) {
  const int x = dims.x / 2, y = dims.y / 2, z = dims.z / 2;
  return x > y ? (x > z ? x : z) : (y > z ? y : z);
}
MURMUR_HD int periodicShellLo(int dim, int k) { return (dim - 1) / 2 < k ? -((dim - 1) / 2) : -k; }
MURMUR_HD int periodicShellHi(int dim, int k) { return dim / 2 < k ? dim / 2 : k; }
MURMUR_HD int wrapCell(int x, int dim) { return x < 0 ? x + dim : (x >= dim ? x - dim : x); }
template <typename F>
MURMUR_HD void forEachPeriodicShellCell(const Int3& dims, const Int3& c, int k, F&& f) {
  for (int oz = periodicShellLo(dims.z, k); oz <= periodicShellHi(dims.z, k); ++oz)
    for (int oy = periodicShellLo(dims.y, k); oy <= periodicShellHi(dims.y, k); ++oy) {
      const bool face = oz == k || oz == -k || oy == k || oy == -k;
      for (int ox = periodicShellLo(dims.x, k); ox <= periodicShellHi(dims.x, k); ++ox) {
        if (!face && ox != k && ox != -k) continue;
        f(wrapCell(c.x + ox, dims.x), wrapCell(c.y + oy, dims.y), wrapCell(c.z + oz, dims.z));
      }
    }
}

// After the periodic shells 0 to k, a lower bound on the distance (by the minimum image) to any
// body in a cell not yet visited: such a cell lies k + 1 cells or more from c along some axis
// either way around, so at least k whole cells lie between, less the grid's overhang beyond the
// world (none but rounding on observablesGrid's periodic grid) and a margin for the rounding of
// the cells and the offsets. 0 or less: no bound.
MURMUR_HD float periodicShellBound(const GridSpec& g, int k, float halfSize) {
  const float L = 2.0f * halfSize, w = g.cellWidth;
  float over = fmaxf(float(g.dims.x) * w - L, float(g.dims.y) * w - L);
  if (g.dims.z > 1) over = fmaxf(over, float(g.dims.z) * w - L);
  return float(k) * w * (1.0f - 1e-4f) - fmaxf(over, 0.0f) - 1e-4f * w;
}

// A cumulative mass within this factor of a Lagrangian radius' fraction counts as reaching it.
constexpr double kLagrangeSlack = 1.0 - 1e-9;

// The reference implementation (the CPU engine's): `b` in any order. Boids use observablesGrid;
// the distances follow the boundary (docs/design.md#the-boundary-rule): not across the faces
// under wrap, by the minimum image under periodic (the flock centres too: circularMean); the
// group columns only where groupObservablesApply; gravity uses G and the softening of `p`.
// Parallel over bodies (OpenMP), sums in double.
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
