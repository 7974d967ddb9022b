#include "core/scenarios.h"

#include <cmath>
#include <sstream>

#include "core/body_io.h"
#include "core/errors.h"
#include "core/rng.h"

namespace murmur::core {

namespace {

constexpr double kPi = 3.14159265358979323846;

struct V3d {
  double x, y, z;
};

V3d randomDirection(Rng& rng) {
  const double z = rng.uniform(-1.0, 1.0);
  const double phi = rng.uniform(0.0, 2.0 * kPi);
  const double s = std::sqrt(1.0 - z * z);
  return V3d{s * std::cos(phi), s * std::sin(phi), z};
}

void setBody(Bodies& b, size_t i, V3d p, V3d v, double m) {
  b.pos[i] = Vec4{float(p.x), float(p.y), float(p.z), float(m)};
  b.vel[i] = Vec4{float(v.x), float(v.y), float(v.z), 0.0f};
  b.id[i] = static_cast<uint32_t>(i);
}

// Shifts positions and velocities to the centre-of-mass frame of bodies [begin, end).
void toCentreOfMassFrame(Bodies& b, size_t begin, size_t end) {
  double m = 0, px = 0, py = 0, pz = 0, vx = 0, vy = 0, vz = 0;
  for (size_t i = begin; i < end; ++i) {
    const double w = b.pos[i].w;
    m += w;
    px += w * b.pos[i].x, py += w * b.pos[i].y, pz += w * b.pos[i].z;
    vx += w * b.vel[i].x, vy += w * b.vel[i].y, vz += w * b.vel[i].z;
  }
  if (m <= 0) return;
  for (size_t i = begin; i < end; ++i) {
    b.pos[i].x -= float(px / m), b.pos[i].y -= float(py / m), b.pos[i].z -= float(pz / m);
    b.vel[i].x -= float(vx / m), b.vel[i].y -= float(vy / m), b.vel[i].z -= float(vz / m);
  }
}

// CIS 565 start: positions uniform in the world cube, at rest, unit mass.
void uniformCube(Bodies& b, Rng& rng, double h, double speed) {
  for (size_t i = 0; i < b.size(); ++i) {
    const V3d p{rng.uniform(-h, h), rng.uniform(-h, h), rng.uniform(-h, h)};
    V3d v{0, 0, 0};
    if (speed > 0) {
      const V3d d = randomDirection(rng);
      const double s = speed * rng.uniform();
      v = V3d{d.x * s, d.y * s, d.z * s};
    }
    setBody(b, i, p, v, 1.0);
  }
}

// Plummer sphere (G = 1) of total mass `mass` and scale radius `a`, sampled as Aarseth, Henon &
// Wielen (1974): radius from the inverted cumulative mass, speed by rejection from
// g(q) = q^2 (1 - q^2)^(7/2) as a fraction of the local escape speed. The outer 1% of the mass
// is cut so that rare far outliers do not stretch the gravity grid's bounding cube.
void plummer(Bodies& b, size_t begin, size_t end, Rng& rng, double mass, double a, V3d centre,
             V3d drift) {
  const size_t n = end - begin;
  if (n == 0) return;
  const double m = mass / double(n);
  for (size_t i = begin; i < end; ++i) {
    double x = rng.uniform(0.0, 0.99);
    while (x <= 1e-10) x = rng.uniform(0.0, 0.99);
    const double r = a / std::sqrt(std::pow(x, -2.0 / 3.0) - 1.0);
    double q = 0, g = 1;
    do {
      q = rng.uniform();
      g = 0.1 * rng.uniform();
    } while (g > q * q * std::pow(1.0 - q * q, 3.5));
    const double vesc = std::sqrt(2.0 * mass / a) * std::pow(1.0 + r * r / (a * a), -0.25);
    const V3d dp = randomDirection(rng), dv = randomDirection(rng);
    setBody(b, i, V3d{dp.x * r, dp.y * r, dp.z * r}, V3d{dv.x * q * vesc, dv.y * q * vesc, dv.z * q * vesc},
            m);
  }
  toCentreOfMassFrame(b, begin, end);
  for (size_t i = begin; i < end; ++i) {
    b.pos[i].x += float(centre.x), b.pos[i].y += float(centre.y), b.pos[i].z += float(centre.z);
    b.vel[i].x += float(drift.x), b.vel[i].y += float(drift.y), b.vel[i].z += float(drift.z);
  }
}

// One disk galaxy with a bulge: a Plummer bulge (a third of the mass, scale 0.2 R_d) and an
// exponential disk (scale length R_d = 1, cut at 4 R_d, thin Gaussian thickness) on circular
// orbits whose speed balances the enclosed mass (spherical approximation). The disk is tilted by
// `tilt` radians about the x axis, then placed at `centre` moving with `drift`.
void diskGalaxy(Bodies& b, size_t begin, size_t end, Rng& rng, double mass, V3d centre, V3d drift,
                double tilt, double spin) {
  const size_t n = end - begin;
  if (n == 0) return;
  const size_t nBulge = n / 3;
  const double mBulge = mass * double(nBulge) / double(n);
  const double mDisk = mass - mBulge;
  const double aBulge = 0.2, rd = 1.0, rMax = 4.0, eps = 0.05;
  plummer(b, begin, begin + nBulge, rng, mBulge, aBulge, V3d{0, 0, 0}, V3d{0, 0, 0});
  const double m = mass / double(n);
  const double cosTilt = std::cos(tilt), sinTilt = std::sin(tilt);
  // Disk mass inside radius r for an exponential disk, normalised to the cut at rMax.
  auto diskEnclosed = [&](double r) {
    auto f = [&](double x) { return 1.0 - (1.0 + x / rd) * std::exp(-x / rd); };
    return mDisk * f(r) / f(rMax);
  };
  for (size_t i = begin + nBulge; i < end; ++i) {
    // An exponential surface density puts mass r e^{-r/R_d} dr at radius r: a Gamma(2)
    // variate, i.e. the sum of two exponentials, redrawn beyond the cut.
    double r = 0;
    do {
      r = -rd * (std::log(1.0 - rng.uniform()) + std::log(1.0 - rng.uniform()));
    } while (r > rMax || r <= 1e-4);
    const double phi = rng.uniform(0.0, 2.0 * kPi);
    const double z = 0.05 * rd * rng.normal();
    const double rb = r * r / (r * r + aBulge * aBulge);
    const double menc = mBulge * rb * std::sqrt(rb) + diskEnclosed(r);
    const double vc = std::sqrt(menc * r * r / std::pow(r * r + eps * eps, 1.5));
    const V3d p{r * std::cos(phi), r * std::sin(phi), z};
    // A cold disk without a halo fragments into clumps within a rotation; random motions of a
    // fifth of the circular speed (a tenth vertically) keep it a smooth disk through the encounter.
    const double sr = 0.2 * vc * rng.normal(), sphi = 0.2 * vc * rng.normal(), sz = 0.1 * vc * rng.normal();
    const double vphi = spin * (vc + sphi);
    const V3d v{-vphi * std::sin(phi) + sr * std::cos(phi), vphi * std::cos(phi) + sr * std::sin(phi), sz};
    // tilt about x
    const V3d pt{p.x, cosTilt * p.y - sinTilt * p.z, sinTilt * p.y + cosTilt * p.z};
    const V3d vt{v.x, cosTilt * v.y - sinTilt * v.z, sinTilt * v.y + cosTilt * v.z};
    setBody(b, i, pt, vt, m);
  }
  for (size_t i = begin; i < end; ++i) {
    b.pos[i].x += float(centre.x), b.pos[i].y += float(centre.y), b.pos[i].z += float(centre.z);
    b.vel[i].x += float(drift.x), b.vel[i].y += float(drift.y), b.vel[i].z += float(drift.z);
  }
}

}  // namespace

const std::vector<std::string>& scenarioNames() {
  static const std::vector<std::string> names = {"uniform", "dense", "plummer", "galaxies"};
  return names;
}

ForceMode naturalForce(const std::string& name) {
  return (name == "uniform" || name == "dense") ? ForceMode::Boids : ForceMode::Gravity;  // files: gravity
}

Scenario makeScenario(const ScenarioSpec& spec, const SimParams& params) {
  Scenario sc;
  sc.halfSize = params.halfSize;
  sc.force = naturalForce(spec.name);
  if (spec.name.rfind("file:", 0) == 0) {
    const std::string path = spec.name.substr(5);
    if (path.empty()) throw UsageError("--scenario file: needs a path (file:PATH)");
    sc.bodies = readBodiesFile(path);
    return sc;
  }
  bool known = false;
  for (const auto& s : scenarioNames()) known = known || s == spec.name;
  if (!known) {
    throw UsageError("--scenario " + spec.name +
                     " is unknown: allowed are uniform, dense, plummer, galaxies, file:PATH");
  }
  if (spec.n < 1 || spec.n > kMaxBodies) {
    std::ostringstream e;
    e << "--n " << spec.n << " is out of range: allowed is 1 to " << kMaxBodies;
    throw UsageError(e.str());
  }
  Bodies& b = sc.bodies;
  b.resize(spec.n);
  Rng rng(spec.seed);
  if (spec.name == "uniform") {
    uniformCube(b, rng, params.halfSize, 0.0);
  } else if (spec.name == "dense") {
    if (!(spec.denseNeighbours > 0)) throw UsageError("dense: neighbours per boid must be > 0");
    // Expected neighbours k = rho * 4/3 pi r^3 with rho = N / (2h)^3; the world never shrinks
    // below two search radii so the grid keeps at least a few cells.
    const double r = maxRuleRadius(params.boids);
    const double side = std::cbrt(double(spec.n) * 4.0 / 3.0 * kPi * r * r * r / spec.denseNeighbours);
    sc.halfSize = float(std::max(side * 0.5, 2.0 * r));
    uniformCube(b, rng, sc.halfSize, 0.5 * params.boids.maxSpeed);
  } else if (spec.name == "plummer") {
    plummer(b, 0, spec.n, rng, 1.0, 1.0, V3d{0, 0, 0}, V3d{0, 0, 0});
  } else {  // galaxies: two equal disks on a collision course, the second tilted
    const size_t half = spec.n / 2;
    diskGalaxy(b, 0, half, rng, 0.5, V3d{-4.0, -1.0, 0.0}, V3d{0.18, 0.04, 0.0}, 0.0, 1.0);
    diskGalaxy(b, half, spec.n, rng, 0.5, V3d{4.0, 1.0, 0.0}, V3d{-0.18, -0.04, 0.0}, 1.0, -1.0);
  }
  return sc;
}

}  // namespace murmur::core
