// The reference observables (core/observables.h): OpenMP over bodies, every sum in double.
#include "core/observables.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "core/cpu_pipeline.h"
#include "core/grid.h"
#include "core/physics.h"
#include "core/rule_table.h"

namespace murmur::core {

const std::vector<ObservableDesc>& observableTable() {
  static const std::vector<ObservableDesc> table = {
#define MURMUR_OBS_ROW(id, column, force, flocks, derived, meaning) \
  {Obs::id, column, ForceMode::force, flocks, derived, meaning},
      MURMUR_OBSERVABLES(MURMUR_OBS_ROW)
#undef MURMUR_OBS_ROW
  };
  return table;
}

const ObservableDesc& observableDesc(Obs o) { return observableTable().at(static_cast<size_t>(o)); }

std::vector<Obs> observedColumns(ForceMode force, bool flocks) {
  std::vector<Obs> out;
  for (const ObservableDesc& d : observableTable())
    if (d.force == force && (flocks || !d.flocks)) out.push_back(d.id);
  return out;
}

GridSpec observablesGrid(const SimParams& p, size_t n) {
  SimParams q = p;
  const double limit = std::max(4.0 * double(n), double(1 << 21));
  for (int f = 1;; ++f) {
    q.cellWidthFactor = f;
    GridSpec g = boidGridAtFactor(q);
    if (p.boundary == Boundary::Periodic) {
      // As many cells across the world as fit whole at this width, each widened to fill it.
      const float L = 2.0f * p.halfSize;
      const int d = std::max(1, static_cast<int>(std::floor(L / g.cellWidth)));
      g = worldGrid(p, L / static_cast<float>(d), d, d);
    }
    if (double(g.dims.x) * g.dims.y * g.dims.z <= limit || g.dims.x <= 1) return g;
  }
}

namespace {

// The observables' boids grid (observablesGrid), whatever the pipeline's own grid is, with its
// cells sorted.
struct ObsGrid {
  GridSpec g;
  std::vector<uint32_t> keys, counts, sortedKeys, sortedIndex, cellStart, cellEnd;
};

ObsGrid buildObsGrid(const std::vector<Vec4>& pos, const SimParams& p) {
  ObsGrid o;
  o.g = observablesGrid(p, pos.size());
  labelCells(o.g, pos, o.keys);
  sortByCell(o.g, o.keys, o.counts, o.sortedKeys, o.sortedIndex);
  findCellBounds(o.g, o.sortedKeys, o.cellStart, o.cellEnd);
  return o;
}

// Calls f(j) for every body j in the cells at Chebyshev distance exactly k from cell c.
template <typename F>
void forEachInShell(const ObsGrid& o, Int3 c, int k, F&& f) {
  const GridSpec& g = o.g;
  for (int cz = std::max(c.z - k, 0); cz <= std::min(c.z + k, g.dims.z - 1); ++cz)
    for (int cy = std::max(c.y - k, 0); cy <= std::min(c.y + k, g.dims.y - 1); ++cy) {
      const bool face = std::abs(cz - c.z) == k || std::abs(cy - c.y) == k;
      for (int cx = std::max(c.x - k, 0); cx <= std::min(c.x + k, g.dims.x - 1); ++cx) {
        if (!face && std::abs(cx - c.x) != k) continue;
        const uint32_t key = cellKey(g, cx, cy, cz);
        if (o.cellStart[key] == kEmptyCell) continue;
        for (uint32_t q = o.cellStart[key]; q < o.cellEnd[key]; ++q) f(o.sortedIndex[q]);
      }
    }
}

// Smallest squared distance (core::distance2) from body i to any other, searched shell by shell
// of cells until no farther cell can hold a closer body; +inf when i is alone. Not across the
// faces (the wrap boundary).
float nearestDistance2(const ObsGrid& o, const std::vector<Vec4>& pos, uint32_t i) {
  const Vec3 pi = xyz(pos[i]);
  const Int3 c = cellOf(o.g, pi);
  const int maxK = std::max({c.x, c.y, c.z, o.g.dims.x - 1 - c.x, o.g.dims.y - 1 - c.y, o.g.dims.z - 1 - c.z});
  float best = INFINITY;
  for (int k = 0; k <= maxK; ++k) {
    forEachInShell(o, c, k, [&](uint32_t j) {
      if (j != i) best = std::min(best, distance2(xyz(pos[j]) - pi));
    });
    // Cells of shell k + 1 lie at least k cell widths away (less a margin for the cell rounding).
    const float bound = float(k) * o.g.cellWidth * (1.0f - 1e-4f);
    if (best < bound * bound) break;
  }
  return best;
}

// The same under the periodic boundary: the shells wrap around the faces and every offset is the
// minimum image's (minimumImageOffset).
float nearestDistance2Periodic(const ObsGrid& o, const std::vector<Vec4>& pos, uint32_t i, float halfSize) {
  const Vec3 pi = xyz(pos[i]);
  const Int3 c = cellOf(o.g, pi);
  const int maxK = periodicShellReach(o.g.dims);
  float best = INFINITY;
  for (int k = 0; k <= maxK; ++k) {
    forEachPeriodicShellCell(o.g.dims, c, k, [&](int cx, int cy, int cz) {
      const uint32_t key = cellKey(o.g, cx, cy, cz);
      if (o.cellStart[key] == kEmptyCell) return;
      for (uint32_t q = o.cellStart[key]; q < o.cellEnd[key]; ++q) {
        const uint32_t j = o.sortedIndex[q];
        if (j != i) best = std::min(best, distance2(minimumImageOffset(pi, xyz(pos[j]), halfSize)));
      }
    });
    const float bound = periodicShellBound(o.g, k, halfSize);
    if (bound > 0.0f && best < bound * bound) break;
  }
  return best;
}

// Calls f(j, d) for every body j in the cells within `radius` of body i's position pi and, under
// the periodic boundary, of each of its images (core::forEachImage), d the offset of j from the
// centre it was found near: the candidates and offsets of the pipelines' own searches.
template <typename F>
void forEachCandidate(const ObsGrid& o, const std::vector<Vec4>& pos, const Vec3& pi, float radius, const SimParams& p,
                      F&& f) {
  forEachImage(pi, radius, p.halfSize, p.boundary == Boundary::Periodic, [&](const Vec3& c) {
    forEachInCells<false>(o.g, cellRangeForRadius(o.g, c, radius), o.cellStart.data(), o.cellEnd.data(),
                          o.sortedIndex.data(), [&](uint32_t j) { f(j, xyz(pos[j]) - c); });
  });
}

struct UnionFind {
  std::vector<uint32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  uint32_t find(uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  }
  void unite(uint32_t a, uint32_t b) {
    a = find(a), b = find(b);
    if (a != b) parent[std::max(a, b)] = std::min(a, b);
  }
};

// The component root of every body: boids closer than the cohesion radius are joined (by the
// minimum image under the periodic boundary).
std::vector<uint32_t> flockRoots(const ObsGrid& o, const std::vector<Vec4>& pos, const SimParams& p) {
  const size_t n = pos.size();
  UnionFind uf(n);
  const BoidParams b = observedBoidParams(p);
  const float r = b.cohesionRadius, r2 = BoidsRule::setup(b).r1;
  for (size_t i = 0; i < n; ++i)
    forEachCandidate(o, pos, xyz(pos[i]), r, p, [&](uint32_t j, const Vec3& d) {
      if (j > i && distance2(d) < r2) uf.unite(uint32_t(i), j);
    });
  std::vector<uint32_t> root(n);
  for (size_t i = 0; i < n; ++i) root[i] = uf.find(uint32_t(i));
  return root;
}

// The group columns (groupObservablesApply), after polarization: the centroid c of all n boids,
// then the sums of addGroupSpin about it.
void observeGroup(const std::vector<Vec4>& pos, const std::vector<Vec4>& vel, Observables& out) {
  const long n = static_cast<long>(pos.size());
  double sx = 0, sy = 0, sz = 0;
#pragma omp parallel for schedule(static) reduction(+ : sx, sy, sz)
  for (long i = 0; i < n; ++i) sx += pos[i].x, sy += pos[i].y, sz += pos[i].z;
  const double c[3] = {sx / double(n), sy / double(n), sz / double(n)};
  double mx = 0, my = 0, mz = 0, lx = 0, ly = 0, lz = 0;
#pragma omp parallel for schedule(static) reduction(+ : mx, my, mz, lx, ly, lz)
  for (long i = 0; i < n; ++i) {
    double rot[3] = {0, 0, 0}, ang[3] = {0, 0, 0};
    addGroupSpin(pos[i], vel[i], c, rot, ang);
    mx += rot[0], my += rot[1], mz += rot[2], lx += ang[0], ly += ang[1], lz += ang[2];
  }
  const double inv = 1.0 / double(n);
  out[Obs::GroupPolarization] = out[Obs::Polarization];
  out[Obs::GroupRotation] = std::sqrt(mx * mx + my * my + mz * mz) * inv;
  out[Obs::GroupAngularMomentum] = std::sqrt(lx * lx + ly * ly + lz * lz) * inv;
}

void observeBoids(const std::vector<Vec4>& pos, const std::vector<Vec4>& vel, const SimParams& p,
                  const ObserveRequest& req, Observables& out) {
  const long n = static_cast<long>(pos.size());
  const ObsGrid o = buildObsGrid(pos, p);
  const BoidsRule::Setup r2 = BoidsRule::setup(observedBoidParams(p));
  const float rMax = searchRadius(p);
  const bool periodic = p.boundary == Boundary::Periodic;
  double ux = 0, uy = 0, uz = 0, speed = 0, nn = 0, c1 = 0, c2 = 0, c3 = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : ux, uy, uz, speed, nn, c1, c2, c3)
  for (long i = 0; i < n; ++i) {
    const Vec4 v = vel[i];
    const double s = std::sqrt(double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z);
    speed += s;
    if (s > 0) ux += v.x / s, uy += v.y / s, uz += v.z / s;
    long k1 = 0, k2 = 0, k3 = 0;
    forEachCandidate(o, pos, xyz(pos[i]), rMax, p, [&](uint32_t j, const Vec3& d) {
      if (j == uint32_t(i)) return;
      const float d2 = distance2(d);
      k1 += d2 < r2.r1, k2 += d2 < r2.r2, k3 += d2 < r2.r3;
    });
    c1 += double(k1), c2 += double(k2), c3 += double(k3);
    if (n > 1) {
      const float best = periodic ? nearestDistance2Periodic(o, pos, uint32_t(i), p.halfSize)
                                  : nearestDistance2(o, pos, uint32_t(i));
      nn += std::sqrt(double(best));
    }
  }
  const double inv = 1.0 / double(n);
  out[Obs::Polarization] = std::sqrt(ux * ux + uy * uy + uz * uz) * inv;
  out[Obs::MeanSpeed] = speed * inv;
  if (n > 1) out[Obs::NearestDistance] = nn * inv;
  out[Obs::NeighboursCohesion] = c1 * inv;
  out[Obs::NeighboursSeparation] = c2 * inv;
  out[Obs::NeighboursAlignment] = c3 * inv;
  if (groupObservablesApply(p.boundary)) observeGroup(pos, vel, out);
  if (!req.flocks) return;

  const std::vector<uint32_t> root = flockRoots(o, pos, p);
  // Per flock: size and centre, then the angular momentum about the centre. Wrap: c = the sums of
  // the positions (cx, cy, cz) over the size. Periodic (circularMean): the sums of the sines
  // (sx, sy, sz) and cosines (cx, cy, cz) of the angles, then the circular mean c0 in (cx, cy,
  // cz) and the sums of the offsets from it by the minimum image in (sx, sy, sz).
  std::vector<double> size(n, 0), cx(n, 0), cy(n, 0), cz(n, 0), lx(n, 0), ly(n, 0), lz(n, 0), den(n, 0);
  std::vector<double> sx, sy, sz;
  const float h = p.halfSize;
  if (!periodic) {
    for (long i = 0; i < n; ++i) {
      const uint32_t f = root[i];
      size[f] += 1, cx[f] += pos[i].x, cy[f] += pos[i].y, cz[f] += pos[i].z;
    }
  } else {
    sx.assign(n, 0), sy.assign(n, 0), sz.assign(n, 0);
    for (long i = 0; i < n; ++i) {
      const uint32_t f = root[i];
      const double ax = periodicAngle(pos[i].x, h), ay = periodicAngle(pos[i].y, h), az = periodicAngle(pos[i].z, h);
      size[f] += 1;
      cx[f] += std::cos(ax), cy[f] += std::cos(ay), cz[f] += std::cos(az);
      sx[f] += std::sin(ax), sy[f] += std::sin(ay), sz[f] += std::sin(az);
    }
    for (long f = 0; f < n; ++f) {
      if (root[f] != uint32_t(f)) continue;
      cx[f] = circularMean(sx[f], cx[f], h), cy[f] = circularMean(sy[f], cy[f], h), cz[f] = circularMean(sz[f], cz[f], h);
      sx[f] = sy[f] = sz[f] = 0;
    }
    for (long i = 0; i < n; ++i) {
      const uint32_t f = root[i];
      sx[f] += minimumImage(pos[i].x - cx[f], h), sy[f] += minimumImage(pos[i].y - cy[f], h),
          sz[f] += minimumImage(pos[i].z - cz[f], h);
    }
  }
  for (long i = 0; i < n; ++i) {
    const uint32_t f = root[i];
    double dx, dy, dz;
    if (!periodic) {
      dx = pos[i].x - cx[f] / size[f], dy = pos[i].y - cy[f] / size[f], dz = pos[i].z - cz[f] / size[f];
    } else {
      dx = minimumImage(pos[i].x - cx[f], h) - sx[f] / size[f];
      dy = minimumImage(pos[i].y - cy[f], h) - sy[f] / size[f];
      dz = minimumImage(pos[i].z - cz[f], h) - sz[f] / size[f];
    }
    const double vx = vel[i].x, vy = vel[i].y, vz = vel[i].z;
    lx[f] += dy * vz - dz * vy, ly[f] += dz * vx - dx * vz, lz[f] += dx * vy - dy * vx;
    den[f] += std::sqrt(dx * dx + dy * dy + dz * dz) * std::sqrt(vx * vx + vy * vy + vz * vz);
  }
  double flocks = 0, largest = 0, millW = 0, mill = 0;
  for (Obs b : {Obs::Flocks1, Obs::Flocks2to9, Obs::Flocks10to99, Obs::Flocks100to999, Obs::Flocks1000Plus})
    out[b] = 0;
  for (long f = 0; f < n; ++f) {
    if (root[f] != uint32_t(f)) continue;
    flocks += 1;
    largest = std::max(largest, size[f]);
    out[flockSizeBin(uint64_t(size[f]))] += 1;
    if (size[f] >= req.millingMinSize) {
      millW += size[f];
      if (den[f] > 0) mill += size[f] * std::sqrt(lx[f] * lx[f] + ly[f] * ly[f] + lz[f] * lz[f]) / den[f];
    }
  }
  out[Obs::Flocks] = flocks;
  out[Obs::LargestFlockShare] = largest * inv;
  if (millW > 0) out[Obs::Milling] = mill / millW;
}

void observeGravity(const std::vector<Vec4>& pos, const std::vector<Vec4>& vel, const SimParams& p,
                    const ObserveRequest& req, Observables& out) {
  const long n = static_cast<long>(pos.size());
  double m = 0, k = 0, rx = 0, ry = 0, rz = 0, px = 0, py = 0, pz = 0, lx = 0, ly = 0, lz = 0;
#pragma omp parallel for schedule(static) reduction(+ : m, k, rx, ry, rz, px, py, pz, lx, ly, lz)
  for (long i = 0; i < n; ++i) {
    const double mi = pos[i].w, x = pos[i].x, y = pos[i].y, z = pos[i].z;
    const double vx = vel[i].x, vy = vel[i].y, vz = vel[i].z;
    m += mi;
    k += 0.5 * mi * (vx * vx + vy * vy + vz * vz);
    rx += mi * x, ry += mi * y, rz += mi * z;
    px += mi * vx, py += mi * vy, pz += mi * vz;
    lx += mi * (y * vz - z * vy), ly += mi * (z * vx - x * vz), lz += mi * (x * vy - y * vx);
  }
  out[Obs::Mass] = m;
  out[Obs::Kinetic] = k;
  out[Obs::ComX] = rx / m, out[Obs::ComY] = ry / m, out[Obs::ComZ] = rz / m;
  out[Obs::MomentumX] = px, out[Obs::MomentumY] = py, out[Obs::MomentumZ] = pz;
  out[Obs::AngularMomentumX] = lx, out[Obs::AngularMomentumY] = ly, out[Obs::AngularMomentumZ] = lz;
  if (static_cast<size_t>(n) <= req.potentialMaxN) {
    const double G = p.gravity.G, eps2 = double(p.gravity.softening) * p.gravity.softening;
    double w = 0;
#pragma omp parallel for schedule(dynamic, 64) reduction(+ : w)
    for (long i = 0; i < n; ++i) {
      double wi = 0;
      for (long j = i + 1; j < n; ++j) {
        const double dx = double(pos[j].x) - pos[i].x, dy = double(pos[j].y) - pos[i].y,
                     dz = double(pos[j].z) - pos[i].z;
        wi += double(pos[j].w) / std::sqrt(dx * dx + dy * dy + dz * dz + eps2);
      }
      w -= G * pos[i].w * wi;
    }
    out[Obs::Potential] = w;
    out[Obs::TotalEnergy] = k + w;
    if (w != 0) out[Obs::VirialRatio] = 2.0 * k / std::fabs(w);
  }
  // Lagrangian radii: the distance from the centre of mass at which the cumulative mass, taken
  // outwards, first reaches 10, 50 and 90% of the total (within kLagrangeSlack, so that equal
  // masses, whose sums land on the fraction exactly, pick the same body whatever the summation
  // order: the GPU scans in another).
  std::vector<std::pair<double, double>> rm(n);
  const double cx = rx / m, cy = ry / m, cz = rz / m;
#pragma omp parallel for schedule(static)
  for (long i = 0; i < n; ++i) {
    const double dx = pos[i].x - cx, dy = pos[i].y - cy, dz = pos[i].z - cz;
    rm[i] = {std::sqrt(dx * dx + dy * dy + dz * dz), double(pos[i].w)};
  }
  std::sort(rm.begin(), rm.end());
  const double fr[3] = {0.1, 0.5, 0.9};
  const Obs col[3] = {Obs::Lagrange10, Obs::Lagrange50, Obs::Lagrange90};
  double cum = 0;
  int next = 0;
  for (long i = 0; i < n && next < 3; ++i) {
    cum += rm[i].second;
    while (next < 3 && cum >= fr[next] * m * kLagrangeSlack) out[col[next++]] = rm[i].first;
  }
}

}  // namespace

Observables observeBodies(const std::vector<Vec4>& pos, const std::vector<Vec4>& vel, const SimParams& p,
                          const ObserveRequest& r) {
  Observables out;
  if (pos.empty()) return out;
  if (runsLocalRule(p))
    observeBoids(pos, vel, p, r, out);
  else
    observeGravity(pos, vel, p, r, out);
  return out;
}

std::vector<uint32_t> flockSizes(const std::vector<Vec4>& pos, const SimParams& p) {
  if (pos.empty()) return {};
  const std::vector<uint32_t> root = flockRoots(buildObsGrid(pos, p), pos, p);
  std::vector<uint32_t> size(pos.size(), 0), out;
  for (uint32_t f : root) ++size[f];
  for (size_t f = 0; f < size.size(); ++f)
    if (root[f] == f) out.push_back(size[f]);
  std::sort(out.rbegin(), out.rend());
  return out;
}

Observables ObservablesSeries::add(Observables o, double time) {
  if (!started_) {
    started_ = true;
    first_ = o;
    t0_ = time;
  }
  const Observables& f = first_;
  if (o.has(Obs::TotalEnergy) && f.has(Obs::TotalEnergy) && f[Obs::TotalEnergy] != 0)
    o[Obs::EnergyDrift] = (o[Obs::TotalEnergy] - f[Obs::TotalEnergy]) / std::fabs(f[Obs::TotalEnergy]);
  if (o.has(Obs::Mass) && f.has(Obs::Mass) && f[Obs::Mass] > 0) {
    const double m = f[Obs::Mass], dt = time - t0_;
    const double dx = o[Obs::ComX] - f[Obs::ComX] - f[Obs::MomentumX] / m * dt;
    const double dy = o[Obs::ComY] - f[Obs::ComY] - f[Obs::MomentumY] / m * dt;
    const double dz = o[Obs::ComZ] - f[Obs::ComZ] - f[Obs::MomentumZ] / m * dt;
    o[Obs::ComDrift] = std::sqrt(dx * dx + dy * dy + dz * dz);
    const double qx = o[Obs::MomentumX] - f[Obs::MomentumX], qy = o[Obs::MomentumY] - f[Obs::MomentumY],
                 qz = o[Obs::MomentumZ] - f[Obs::MomentumZ];
    const double scale = std::sqrt(2.0 * f[Obs::Kinetic] * m);
    if (scale > 0) o[Obs::MomentumDrift] = std::sqrt(qx * qx + qy * qy + qz * qz) / scale;
    const double lx = o[Obs::AngularMomentumX] - f[Obs::AngularMomentumX],
                 ly = o[Obs::AngularMomentumY] - f[Obs::AngularMomentumY],
                 lz = o[Obs::AngularMomentumZ] - f[Obs::AngularMomentumZ];
    const double l0 = std::sqrt(f[Obs::AngularMomentumX] * f[Obs::AngularMomentumX] +
                                f[Obs::AngularMomentumY] * f[Obs::AngularMomentumY] +
                                f[Obs::AngularMomentumZ] * f[Obs::AngularMomentumZ]);
    if (l0 > 0) o[Obs::AngularMomentumDrift] = std::sqrt(lx * lx + ly * ly + lz * lz) / l0;
  }
  return o;
}

BoidParams observedBoidParams(const SimParams& p) {
  BoidParams b = p.boids;
  if (!samplesBoidCounts(p)) b.cohesionRadius = b.separationRadius = b.alignmentRadius = searchRadius(p);
  return b;
}

}  // namespace murmur::core
