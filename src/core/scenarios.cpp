#include "core/scenarios.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/body_io.h"
#include "core/errors.h"
#include "core/rng.h"
#include "core/rule_table.h"
#include "core/rules/local_rules.h"

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

V3d randomPlaneDirection(Rng& rng) {
  const double phi = rng.uniform(0.0, 2.0 * kPi);
  return V3d{std::cos(phi), std::sin(phi), 0.0};
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

// CIS 565 start: positions uniform in the world cube (the square z = 0 in 2D), at rest (or at
// random speeds up to `speed`), unit mass.
// The draws uniformCube takes per body: the position, then a direction and a speed when moving.
uint64_t uniformDraws(double speed, bool plane) {
  return (plane ? 2 : 3) + (speed > 0 ? (plane ? 1 : 2) + 1 : 0);
}

// Bodies firstId, firstId + 1, ... into b[0, b.size()), each from the next uniformDraws of rng.
// exact: every speed is `speed` (a rule that keeps a constant speed), else uniform in [0, speed);
// the same draws either way.
void uniformCube(Bodies& b, Rng& rng, double h, double speed, bool plane, size_t firstId, bool exact) {
  for (size_t i = 0; i < b.size(); ++i) {
    const V3d p{rng.uniform(-h, h), rng.uniform(-h, h), plane ? 0.0 : rng.uniform(-h, h)};
    V3d v{0, 0, 0};
    if (speed > 0) {
      const V3d d = plane ? randomPlaneDirection(rng) : randomDirection(rng);
      const double u = rng.uniform();
      const double s = exact ? speed : speed * u;
      v = V3d{d.x * s, d.y * s, d.z * s};
    }
    setBody(b, i, p, v, 1.0);
    b.id[i] = static_cast<uint32_t>(firstId + i);
  }
}

// Every velocity scaled to `speed`; a body at rest takes a random direction from rng.
void setSpeeds(Bodies& b, double speed, Rng& rng, bool plane) {
  for (size_t i = 0; i < b.size(); ++i) {
    const Vec4 v = b.vel[i];
    const double s2 = double(v.x) * v.x + double(v.y) * v.y + double(v.z) * v.z;
    V3d d{0, 0, 0};
    if (s2 > 0) {
      const double k = 1.0 / std::sqrt(s2);
      d = V3d{v.x * k, v.y * k, v.z * k};
    } else {
      d = plane ? randomPlaneDirection(rng) : randomDirection(rng);
    }
    b.vel[i] = Vec4{float(d.x * speed), float(d.y * speed), float(d.z * speed), 0.0f};
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

// Plummer enclosed mass and density (unnormalised) of mass m and scale a.
double plummerEnclosed(double m, double a, double r) { return m * r * r * r / std::pow(r * r + a * a, 1.5); }
double plummerDensity(double a, double r) { return std::pow(1.0 + r * r / (a * a), -2.5); }

// A disk galaxy (docs/design.md#galaxies-worth-watching): an exponential disk with a Plummer bulge,
// both inside a live Plummer dark halo of bodies. The halo is live rather than a fixed potential
// because then it needs nothing new from the physics: every pipeline (and a tree, which groups
// the halo's many distant bodies into few nodes) treats it like any other mass, and in a
// collision the haloes take up orbital energy (dynamical friction), so the galaxies merge instead
// of passing through each other. Velocities come from equilibrium, not guesses:
// - halo and bulge: isotropic Gaussian speeds with the Jeans dispersion of their density in the
//   potential of all three components (enclosed mass, spherical approximation);
// - disk: circular speed of the spherical components plus the thin disk's own, radial dispersion from a Toomre Q of
//   kToomreQ (what keeps a disk from clumping), the epicyclic ratio for the azimuthal one,
//   vertical dispersion of a self-gravitating sech^2 sheet of the disk's thickness (what keeps
//   it from thickening or collapsing), and the asymmetric drift for the mean rotation.
struct GalaxyShape {
  static constexpr double kDiskScale = 1.0;      // R_d
  static constexpr double kDiskCut = 4.0;        // R_d: disk bodies beyond are redrawn
  static constexpr double kDiskHeight = 0.1;     // sech^2 scale height, R_d
  static constexpr double kBulgeScale = 0.3;     // Plummer scale, R_d
  static constexpr double kHaloScale = 4.0;      // Plummer scale, R_d
  static constexpr double kHaloCut = 15.0;       // R_d: halo bodies beyond are redrawn
  static constexpr double kToomreQ = 1.5;
};

// Circular speed^2 of a thin exponential disk (Freeman 1970): 4 pi G Sigma_0 R_d y^2
// (I0 K0 - I1 K1)(y), y = R / 2 R_d, with Sigma_0 normalised to the disk's mass inside the cut.
// The spherical approximation (enclosed mass / r) underestimates it by up to a fifth near
// 2 R_d: a disk started on those speeds sub-rotates and contracts.
double diskCircularSpeed2(double mDisk, double r) {
  const double rd = GalaxyShape::kDiskScale, cut = GalaxyShape::kDiskCut;
  const double inside = 1.0 - (1.0 + cut / rd) * std::exp(-cut / rd);
  const double sigma0 = mDisk / (2.0 * kPi * rd * rd * inside);
  const double y = r / (2.0 * rd);
  return 4.0 * kPi * sigma0 * rd * y * y *
         (std::cyl_bessel_i(0.0, y) * std::cyl_bessel_k(0.0, y) - std::cyl_bessel_i(1.0, y) * std::cyl_bessel_k(1.0, y));
}

double diskEnclosedMass(double mDisk, double r) {
  const double rd = GalaxyShape::kDiskScale, cut = GalaxyShape::kDiskCut;
  auto f = [&](double x) { return 1.0 - (1.0 + x / rd) * std::exp(-x / rd); };
  return mDisk * f(std::min(r, cut)) / f(cut);
}

// Isotropic Jeans dispersion sigma^2(r) = 1 / rho(r) int_r^inf rho(s) G M(s) / s^2 ds of a
// Plummer component of scale `a` in the enclosed mass `menc`, tabulated on a log grid.
class JeansTable {
 public:
  template <typename Menc>
  JeansTable(double a, double rMax, Menc menc) {
    const int n = 2000;
    r_.resize(n);
    s2_.resize(n);
    const double lo = std::log(1e-4), hi = std::log(rMax);
    for (int k = 0; k < n; ++k) r_[k] = std::exp(lo + (hi - lo) * k / (n - 1));
    double integral = 0;
    s2_[n - 1] = 0;
    for (int k = n - 2; k >= 0; --k) {
      auto f = [&](double x) { return plummerDensity(a, x) * menc(x) / (x * x); };
      integral += 0.5 * (f(r_[k]) + f(r_[k + 1])) * (r_[k + 1] - r_[k]);
      s2_[k] = integral / plummerDensity(a, r_[k]);
    }
  }
  double sigma2(double r) const {
    if (r <= r_.front()) return s2_.front();
    if (r >= r_.back()) return 0;
    const double t = (std::log(r) - std::log(r_.front())) / (std::log(r_.back()) - std::log(r_.front())) *
                     double(r_.size() - 1);
    const size_t k = std::min(static_cast<size_t>(t), r_.size() - 2);
    const double f = t - double(k);
    return s2_[k] * (1 - f) + s2_[k + 1] * f;
  }

 private:
  std::vector<double> r_, s2_;
};

// Positions of a Plummer component with Jeans velocities, cut at rMax.
void plummerJeans(Bodies& b, size_t begin, size_t end, Rng& rng, double mass, double a, double rMax,
                  const JeansTable& jeans) {
  const size_t n = end - begin;
  if (n == 0) return;
  for (size_t i = begin; i < end; ++i) {
    double r = 0;
    do {
      const double x = rng.uniform(1e-10, 1.0);
      r = a / std::sqrt(std::pow(x, -2.0 / 3.0) - 1.0);
    } while (r > rMax);
    const double sigma = std::sqrt(jeans.sigma2(r));
    const V3d d = randomDirection(rng);
    setBody(b, i, V3d{d.x * r, d.y * r, d.z * r},
            V3d{sigma * rng.normal(), sigma * rng.normal(), sigma * rng.normal()}, mass / double(n));
  }
}

void diskGalaxy(Bodies& b, size_t begin, size_t end, Rng& rng, double luminousMass, V3d centre, V3d drift,
                double tilt, double spin) {
  using S = GalaxyShape;
  const GalaxyLayout layout = galaxyLayout(end - begin);
  const double mBulge = kGalaxyBulgeShare * luminousMass, mDisk = luminousMass - mBulge;
  const double mHalo = kGalaxyHaloToLuminous * luminousMass;
  auto menc = [&](double r) {
    return plummerEnclosed(mBulge, S::kBulgeScale, r) + diskEnclosedMass(mDisk, r) +
           plummerEnclosed(mHalo, S::kHaloScale, r);
  };
  const size_t haloEnd = begin + layout.halo, bulgeEnd = haloEnd + layout.bulge;
  plummerJeans(b, begin, haloEnd, rng, mHalo, S::kHaloScale, S::kHaloCut, JeansTable(S::kHaloScale, 100.0, menc));
  plummerJeans(b, haloEnd, bulgeEnd, rng, mBulge, S::kBulgeScale, S::kDiskCut,
               JeansTable(S::kBulgeScale, 100.0, menc));
  const double rd = S::kDiskScale, z0 = S::kDiskHeight;
  const size_t nDisk = end - bulgeEnd;
  const double cosTilt = std::cos(tilt), sinTilt = std::sin(tilt);
  for (size_t i = bulgeEnd; i < end; ++i) {
    // An exponential surface density puts mass r e^{-r/R_d} dr at radius r: a Gamma(2)
    // variate, i.e. the sum of two exponentials, redrawn beyond the cut.
    double r = 0;
    do {
      r = -rd * (std::log(1.0 - rng.uniform()) + std::log(1.0 - rng.uniform()));
    } while (r > S::kDiskCut || r <= 1e-3);
    const double phi = rng.uniform(0.0, 2.0 * kPi);
    // sech^2 sheet: z = z0 atanh(2u - 1).
    const double z = z0 * std::atanh(rng.uniform(-0.999, 0.999));
    const double vc2 = (plummerEnclosed(mBulge, S::kBulgeScale, r) + plummerEnclosed(mHalo, S::kHaloScale, r)) / r +
                       diskCircularSpeed2(mDisk, r);
    const double omega = std::sqrt(vc2) / r;
    const double kappa = std::sqrt(2.0) * omega;  // flat-rotation-curve epicycle frequency
    const double sigma0 = mDisk / (2.0 * kPi * rd * rd) * std::exp(-r / rd);  // surface density
    const double sigmaR = std::min(S::kToomreQ * 3.36 * sigma0 / kappa, 0.5 * std::sqrt(vc2));
    const double sigmaPhi = sigmaR * kappa / (2.0 * omega);
    const double sigmaZ = std::sqrt(kPi * sigma0 * z0);
    // Asymmetric drift for sigma_R^2 ~ e^{-r/R_d} and kappa^2 / 4 Omega^2 = 1/2.
    const double vphi2 = vc2 + sigmaR * sigmaR * (0.5 - 2.0 * r / rd);
    const double vphi = spin * (std::sqrt(std::max(vphi2, 0.0)) + sigmaPhi * rng.normal());
    const double vr = sigmaR * rng.normal(), vz = sigmaZ * rng.normal();
    const V3d p{r * std::cos(phi), r * std::sin(phi), z};
    const V3d v{-vphi * std::sin(phi) + vr * std::cos(phi), vphi * std::cos(phi) + vr * std::sin(phi), vz};
    const V3d pt{p.x, cosTilt * p.y - sinTilt * p.z, sinTilt * p.y + cosTilt * p.z};
    const V3d vt{v.x, cosTilt * v.y - sinTilt * v.z, sinTilt * v.y + cosTilt * v.z};
    setBody(b, i, pt, vt, mDisk / double(nDisk));
  }
  // A galaxy of one body keeps its random disk orbit rather than collapse onto the centre.
  if (end - begin > 1) toCentreOfMassFrame(b, begin, end);
  for (size_t i = begin; i < end; ++i) {
    b.pos[i].x += float(centre.x), b.pos[i].y += float(centre.y), b.pos[i].z += float(centre.z);
    b.vel[i].x += float(drift.x), b.vel[i].y += float(drift.y), b.vel[i].z += float(drift.z);
  }
}

}  // namespace

GalaxyLayout galaxyLayout(size_t n) {
  GalaxyLayout g;
  g.halo = n * 2 / 5;
  g.bulge = n / 10;
  g.disk = n - g.halo - g.bulge;
  return g;
}

const std::vector<std::string>& scenarioNames() {
  static const std::vector<std::string> names = {"uniform", "dense", "plummer", "galaxies", "galaxy"};
  return names;
}

ForceMode naturalForce(const std::string& name) {
  return (name == "uniform" || name == "dense") ? localRuleForce() : ForceMode::Gravity;  // files: gravity
}

float denseHalfSize(size_t n, const SimParams& p, double neighbours) {
  const double r = searchRadius(p);
  // k = N ball(r) / side^D: side = (N ball(r) / k)^(1/D).
  const double m = double(n) * ballMeasure(p, r) / neighbours;
  const double side = p.dims == 2 ? std::sqrt(m) : std::cbrt(m);
  return float(std::max(side * 0.5, 2.0 * r));
}

namespace {

// --dims 2: a body file must lie in the plane already (nothing is flattened silently).
void checkPlanarFile(const Bodies& b, const std::string& name) {
  for (size_t i = 0; i < b.size(); ++i)
    if (b.pos[i].z != 0.0f || b.vel[i].z != 0.0f) {
      std::ostringstream e;
      e << "--dims 2: body " << i << " of " << name << " has z = " << b.pos[i].z << ", vz = " << b.vel[i].z
        << " (a 2D world needs z = 0 and vz = 0 for every body)";
      throw UsageError(e.str());
    }
}

// --dims 2 with a gravity scenario: its bodies projected onto the plane z = 0, at rest in z, in
// the centre-of-mass frame (whose z parts are then 0, so the shift keeps z = 0 exactly). Said in
// the scenario's note: the projection of a 3D equilibrium is not one of planar gravity.
void flattenOntoPlane(Bodies& b) {
  for (size_t i = 0; i < b.size(); ++i) b.pos[i].z = 0.0f, b.vel[i].z = 0.0f;
  toCentreOfMassFrame(b, 0, b.size());
}

}  // namespace

std::vector<BodyRange> parseSelect(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return UsageError("--select " + text + ": " + why +
                      " (allowed: comma-separated body indices or ranges A-B, 0-based, ascending, "
                      "e.g. 0-16383,32768-40959)");
  };
  auto number = [&](const std::string& item) {
    if (item.empty() || item.size() > 12 || item.find_first_not_of("0123456789") != std::string::npos)
      throw bad("'" + item + "' is not a body index");
    return static_cast<size_t>(std::stoull(item));
  };
  std::vector<BodyRange> out;
  if (text.empty()) throw bad("no ranges");
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const size_t dash = item.find('-');
    BodyRange r;
    r.first = number(item.substr(0, dash));
    r.last = dash == std::string::npos ? r.first : number(item.substr(dash + 1));
    if (r.last < r.first) throw bad("range " + item + " ends before it starts");
    if (!out.empty() && r.first <= out.back().last) throw bad("range " + item + " is not after the one before it");
    out.push_back(r);
    at = comma + 1;
  }
  return out;
}

std::string takeFromFile(Bodies& b, const ScenarioSpec& spec, const std::string& name) {
  const size_t total = b.size();
  std::vector<size_t> keep;
  std::ostringstream note;
  if (!spec.select.empty()) {
    for (const BodyRange& r : parseSelect(spec.select)) {
      if (r.last >= total)
        throw UsageError("--select " + spec.select + ": body " + std::to_string(r.last) + " is past the " +
                         std::to_string(total) + " bodies of " + name + " (indices 0 to " + std::to_string(total - 1) +
                         ")");
      for (size_t i = r.first; i <= r.last; ++i) keep.push_back(i);
    }
    note << "kept " << keep.size() << " of the " << total << " bodies (--select " << spec.select << ")";
  } else {
    keep.resize(total);
    for (size_t i = 0; i < total; ++i) keep[i] = i;
  }
  if (spec.fileSubset) {
    const size_t from = keep.size(), n = spec.n;
    if (n < 1 || n > from)
      throw UsageError("--n " + std::to_string(n) + " is more than the " + std::to_string(from) + " bodies " +
                       (spec.select.empty() ? "of " + name : "--select keeps") + " (allowed: 1 to " +
                       std::to_string(from) + ", an even subset)");
    // Body floor(i * from / n) for i < n: every k-th when from = k n, else steps of k and k + 1.
    std::vector<size_t> sub(n);
    for (size_t i = 0; i < n; ++i) sub[i] = keep[static_cast<size_t>((uint64_t(i) * from) / n)];
    keep.swap(sub);
    if (n != from) {  // every body: nothing to say
      note << (note.tellp() > 0 ? ", then " : "") << "an even subset of " << n << " of " << from;
      if (from % n == 0) {
        note << ": one body in every " << from / n;
      } else {
        note.precision(3);
        note << ": one body in every " << double(from) / double(n) << " on average (" << from
             << " is not a multiple of " << n << ")";
      }
    }
  }
  Bodies out;
  out.resize(keep.size());
  const float L = float(spec.scaleLength), V = float(spec.scaleVelocity), M = float(spec.scaleMass);
  for (size_t k = 0; k < keep.size(); ++k) {
    const Vec4 p = b.pos[keep[k]], v = b.vel[keep[k]];
    out.pos[k] = Vec4{p.x * L, p.y * L, p.z * L, p.w * M};
    out.vel[k] = Vec4{v.x * V, v.y * V, v.z * V, v.w};
    out.id[k] = static_cast<uint32_t>(k);
    if (!b.species.empty()) out.species[k] = b.species[keep[k]];  // a file without species: 0
    const Vec4& q = out.pos[k];
    const Vec4& u = out.vel[k];
    if (!std::isfinite(q.x) || !std::isfinite(q.y) || !std::isfinite(q.z) || !std::isfinite(q.w) ||
        !std::isfinite(u.x) || !std::isfinite(u.y) || !std::isfinite(u.z))
      throw UsageError("the scale factors overflow body " + std::to_string(keep[k]) + " of " + name +
                       " (--scale-length " + std::to_string(spec.scaleLength) + ", --scale-velocity " +
                       std::to_string(spec.scaleVelocity) + ", --scale-mass " + std::to_string(spec.scaleMass) +
                       ")");
  }
  if (spec.scaleLength != 1.0 || spec.scaleVelocity != 1.0 || spec.scaleMass != 1.0) {
    note << (note.tellp() > 0 ? "; " : "") << "scaled: length x" << spec.scaleLength << ", velocity x"
         << spec.scaleVelocity << ", mass x" << spec.scaleMass;
  }
  b = std::move(out);
  const std::string text = note.str();
  return text.empty() ? "" : name + ": " + text;
}

std::string checkBodyCount(size_t n, bool inShares) {
  const size_t most = inShares ? kMaxBodiesOverRanks : kMaxBodies;
  if (n >= 1 && n <= most) return "";
  std::ostringstream e;
  e << "--n " << n << " is out of range: allowed is 1 to " << most;
  if (!inShares && n > kMaxBodies && n <= kMaxBodiesOverRanks)
    e << " (up to " << kMaxBodiesOverRanks << " for boids over several ranks with --scenario uniform or dense)";
  return e.str();
}

namespace {

void checkCount(const ScenarioSpec& spec, bool inShares) {
  const std::string err = checkBodyCount(spec.n, inShares);
  if (!err.empty()) throw UsageError(err);
}

}  // namespace

bool scenarioMakesShares(const std::string& name) { return name == "uniform" || name == "dense"; }

Scenario makeScenarioShare(const ScenarioSpec& spec, const SimParams& params, size_t first, size_t last) {
  if (!scenarioMakesShares(spec.name))
    throw std::invalid_argument("scenario " + spec.name + " is made whole, not in shares");
  checkCount(spec, true);
  if (first > last || last > spec.n)
    throw std::invalid_argument("share [" + std::to_string(first) + ", " + std::to_string(last) + ") of " +
                                std::to_string(spec.n) + " bodies");
  Scenario sc;
  sc.force = naturalForce(spec.name);
  sc.halfSize = params.halfSize;
  double speed = 0.0;
  if (spec.name == "dense") {
    if (!(spec.denseNeighbours > 0)) throw UsageError("dense: neighbours per boid must be > 0");
    // Expected neighbours k = rho * 4/3 pi r^3 with rho = N / (2h)^3; the world never shrinks
    // below two search radii so the grid keeps at least a few cells.
    sc.halfSize = denseHalfSize(spec.n, params, spec.denseNeighbours);
    speed = 0.5 * params.boids.maxSpeed;
  }
  // A rule that keeps every body at its speed starts them there, in random directions.
  const double constant = runsLocalRule(params) ? constantSpeedOf(params) : 0.0;
  if (constant > 0) speed = constant;
  const bool plane = params.dims == 2;
  sc.bodies.resize(last - first);
  Rng rng(spec.seed);
  rng.advance(uniformDraws(speed, plane) * uint64_t(first));  // body `first`'s draws
  uniformCube(sc.bodies, rng, sc.halfSize, speed, plane, first, constant > 0);
  return sc;
}

Scenario makeScenario(const ScenarioSpec& spec, const SimParams& params) {
  Scenario sc;
  sc.halfSize = params.halfSize;
  sc.force = naturalForce(spec.name);
  if (spec.name.rfind("file:", 0) == 0) {
    const std::string path = spec.name.substr(5);
    if (path.empty()) throw UsageError("--scenario file: needs a path (file:PATH)");
    StateHeader header;
    sc.bodies = readBodiesFile(path, &header);
    // A saved state says which force it ran with (its world and parameters reach `params`
    // through the options, see app/options.cpp); a plain body file is gravity.
    if (!header.force.empty()) parse(header.force, sc.force);
    if (spec.scaleLength != 1.0 && runsLocalRule(sc.force))
      throw UsageError("--scale-length applies to gravity bodies: the boids state in " + spec.name +
                       " keeps its world (--half-size " + std::to_string(params.halfSize) + ")");
    sc.note = takeFromFile(sc.bodies, spec, spec.name);
    if (params.dims == 2) checkPlanarFile(sc.bodies, spec.name);
    // A rule that keeps a constant speed runs the file's bodies at it (a body at rest takes a
    // random direction).
    if (runsLocalRule(params) && constantSpeedOf(params) > 0) {
      Rng rng(spec.seed);
      setSpeeds(sc.bodies, constantSpeedOf(params), rng, params.dims == 2);
    }
    return sc;
  }
  bool known = false;
  for (const auto& s : scenarioNames()) known = known || s == spec.name;
  if (!known) {
    throw UsageError("--scenario " + spec.name +
                     " is unknown: allowed are uniform, dense, plummer, galaxies, galaxy, file:PATH");
  }
  checkCount(spec, false);  // one process makes every body here
  if (scenarioMakesShares(spec.name)) return makeScenarioShare(spec, params, 0, spec.n);
  Bodies& b = sc.bodies;
  b.resize(spec.n);
  Rng rng(spec.seed);
  const bool plane = params.dims == 2;
  if (spec.name == "plummer") {
    plummer(b, 0, spec.n, rng, 1.0, 1.0, V3d{0, 0, 0}, V3d{0, 0, 0});
  } else if (spec.name == "galaxy") {  // one disk galaxy at rest, face-on: the isolated-stability case
    diskGalaxy(b, 0, spec.n, rng, kGalaxyLuminousMass, V3d{0, 0, 0}, V3d{0, 0, 0}, 0.0, 1.0);
  } else {
    // galaxies: two equal disk galaxies on a parabolic orbit (they fall together from rest at
    // infinity: relative speed sqrt(2 G M / D) at separation D) with pericentre kPericentre,
    // the first disk prograde in the orbital plane, the second tilted by 1 rad about x. Prograde
    // encounters raise the long tidal tails and the bridge (Toomre & Toomre 1972).
    constexpr double kSeparation = 16.0, kPericentre = 3.0;
    const double total = 2.0 * (1.0 + kGalaxyHaloToLuminous) * kGalaxyLuminousMass;
    const double vRel = std::sqrt(2.0 * total / kSeparation);
    const double vt = std::sqrt(2.0 * total * kPericentre) / kSeparation;  // angular momentum / D
    const double vr = std::sqrt(std::max(vRel * vRel - vt * vt, 0.0));
    const size_t half = spec.n / 2;
    diskGalaxy(b, 0, half, rng, kGalaxyLuminousMass, V3d{-0.5 * kSeparation, 0.0, 0.0},
               V3d{0.5 * vr, -0.5 * vt, 0.0}, 0.0, 1.0);
    diskGalaxy(b, half, spec.n, rng, kGalaxyLuminousMass, V3d{0.5 * kSeparation, 0.0, 0.0},
               V3d{-0.5 * vr, 0.5 * vt, 0.0}, 1.0, 1.0);
  }
  if (plane && sc.force == ForceMode::Gravity) {
    flattenOntoPlane(b);
    sc.note = spec.name + " projected onto the plane z = 0 (--dims 2; not an equilibrium of planar gravity)";
  }
  return sc;
}

}  // namespace murmur::core
