#include "app/view_setup.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rule_table.h"
#include "core/rules/local_rules.h"

namespace murmur::app {

ViewStyle defaultStyle(const core::SimParams& p, const core::Bodies& bodies, const std::string& drawName,
                       const std::string& colourName) {
  return defaultStyle(p, bodies.size(), bodies, drawName, colourName);
}

ViewStyle defaultStyle(const core::SimParams& p, size_t n, const core::Bodies& bodies, const std::string& drawName,
                       const std::string& colourName) {
  ViewStyle s;
  if (core::runsLocalRule(p)) {
    s.draw = render::DrawMode::Boids;
    s.colour = render::ColourMode::Velocity;
    // A glyph 0.4 of the mean spacing of the boids long: a flock reads as a swarm of arrows at
    // any N and world size, and the space between flocks stays dark (the fixed half-size / 120 drew
    // 10k boids of the default world as specks: 2.1% of the pixels lit at step 800, 14.9% now).
    // In the plane the world is sqrt(N) spacings across rather than cbrt(N), and no boid hides
    // another: glyphs 0.8 of the spacing, and no depth cue (the plane has no depth).
    const float count = float(std::max<size_t>(n, 1));
    const bool plane = p.dims == 2;
    const float spacing = 2.0f * p.halfSize / (plane ? std::sqrt(count) : std::cbrt(count));
    s.bodySize = std::max({0.6f, p.halfSize / 120.0f, (plane ? 0.8f : 0.4f) * spacing});
    if (plane) s.splat.fogStrength = 0.0f;
    s.speedScale = core::localMaxSpeed(p);
  } else {
    s.draw = render::DrawMode::Sprites;
    s.colour = render::ColourMode::Speed;
    // Typical speed sets the colour ramp so that both cold and hot bodies show.
    std::vector<float> speeds;
    for (size_t i = 0; i < bodies.size(); i += std::max<size_t>(1, n / 4096))
      speeds.push_back(core::length(core::xyz(bodies.vel[i])));
    std::sort(speeds.begin(), speeds.end());
    s.speedScale = speeds.empty() ? 1.0f : std::max(1e-3f, 2.0f * speeds[speeds.size() / 2]);
    // Sprites add up: keeping n * alpha about constant keeps a galaxy's brightness the same at
    // any N (0.7 at 150k; at 1M a third of that still burnt the disks to white).
    s.spriteAlpha = std::clamp(0.7f * 150000.0f / float(std::max<size_t>(n, 1)), 0.05f, 0.7f);
  }
  s.pointSize = n > 1000000 ? 1.0f : 2.0f;
  // The splat renderer keeps the nearest body per pixel: right for flocks, where the surfaces of
  // the flocks are the picture. Gravity stays on additive sprites at every N: a galaxy is a
  // density, and nearest-body splats of a million bodies show only the halo in front of it.
  if (core::runsLocalRule(p) && n >= kSplatDefaultMinBodies) s.draw = render::DrawMode::Splat;
  // A splat body a sixth of the separation radius across: one pixel from the default distance,
  // a shaded disc when the camera comes close.
  s.splat.bodySize =
      core::runsLocalRule(p) ? std::min(p.boids.separationRadius, core::searchRadius(p)) / 6.0f : s.bodySize;
  if (!drawName.empty()) render::parse(drawName, s.draw);
  if (!colourName.empty()) render::parse(colourName, s.colour);
  return s;
}

void applySplatOptions(ViewStyle& style, float slab, float fog, float edl, bool warpReduce) {
  style.splat.slabHalfWidth = 0.5f * slab;
  if (fog >= 0) style.splat.fogStrength = fog;
  if (edl >= 0) style.splat.edlStrength = edl;
  style.warpReduce = warpReduce;
}

render::OverlayStyle overlayStyle(const ViewStyle& style) {
  render::OverlayStyle o;
  o.boxHalfSize = style.box ? style.boxHalfSize : 0.0f;
  o.boxHalfDepth = style.boxHalfDepth;
  // The box fades with depth as the bodies do: the splat's fog strength in every mode.
  o.worldRadius = style.worldRadius;
  o.fog = style.splat.fogStrength;
  o.legend = style.legend;
  o.colour = style.colour;
  o.speedFloor = style.speedFloor;
  o.speedScale = style.speedScale;
  o.plane = style.plane;
  return o;
}

void fitSpeedRange(const core::Bodies& bodies, const core::SimParams& p, ViewStyle& style) {
  std::vector<float> speeds;
  const size_t n = bodies.size();
  for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 8192)) speeds.push_back(core::length(core::xyz(bodies.vel[i])));
  std::sort(speeds.begin(), speeds.end());
  const float lo = speeds.empty() ? 0.0f : speeds[speeds.size() * 2 / 100];
  const float hi = speeds.empty() ? 0.0f : speeds[std::min(speeds.size() - 1, speeds.size() * 98 / 100)];
  if (hi > 0.0f && hi - lo > 1e-3f * hi) {
    style.speedFloor = lo;
    style.speedScale = hi;
  } else {
    style.speedFloor = 0.0f;
    style.speedScale = core::runsLocalRule(p) ? core::localMaxSpeed(p) : std::max(1e-3f, 2.0f * hi);
  }
}

void frameScene(render::Camera& camera, const core::Bodies& bodies, const core::SimParams& p, ViewStyle& style) {
  const bool plane = p.dims == 2;  // looked at from straight above (z), which is also the home view
  if (plane) {
    camera.setYaw(0.0f);
    camera.setPitch(0.0f);
  }
  style.boxHalfDepth = plane ? 0.0f : -1.0f;
  style.plane = plane;
  const bool open = core::runsLocalRule(p) && p.boundary == core::Boundary::Open && bodies.size() > 0;
  if ((core::runsLocalRule(p) && !open) || bodies.size() == 0) {
    // The cube's half-diagonal for depth dimming. The camera sees the cube from above and to the
    // side, so that its box reads as a box and flocks at different depths fall apart on screen
    // (face-on, the depth axis collapses and the flocks of the front and back layers overlap), as
    // close as keeps the whole cube in a frame of the window's shape with the panel (1280 x 720,
    // 940 pixels of it for the view): bodies wrap at the faces, so the cube is where they are.
    style.worldRadius = p.halfSize * 1.7320508f;
    style.boxHalfSize = p.halfSize;
    camera.setYaw(plane ? 0.0f : kBoidsViewYaw);
    camera.setPitch(plane ? 0.0f : kBoidsViewPitch);
    camera.fitBox(glm::vec3(0.0f), p.halfSize, 1.3f, plane ? 0.0f : -1.0f);
    return;
  }
  // Gravity, and an open world of boids: centre on the mass, radius that holds 95% of the bodies
  // (outliers are allowed to leave the frame).
  double m = 0, cx = 0, cy = 0, cz = 0;
  for (const core::Vec4& q : bodies.pos) {
    m += q.w;
    cx += double(q.w) * q.x, cy += double(q.w) * q.y, cz += double(q.w) * q.z;
  }
  if (m <= 0) m = 1;
  const glm::vec3 c(float(cx / m), float(cy / m), float(cz / m));
  std::vector<float> r;
  const size_t n = bodies.size();
  for (size_t i = 0; i < n; i += std::max<size_t>(1, n / 8192))
    r.push_back(glm::length(glm::vec3(bodies.pos[i].x, bodies.pos[i].y, bodies.pos[i].z) - c));
  std::sort(r.begin(), r.end());
  const float radius = std::max(1e-3f, r[std::min(r.size() - 1, r.size() * 95 / 100)]);
  style.worldRadius = radius * 1.3f;
  style.boxHalfSize = 0;  // an open world: no box to show
  if (!open) {  // boids keep the size their count and start gave them
    style.bodySize = radius / 120.0f;
    style.splat.bodySize = radius / 400.0f;
  }
  camera.fitBounds(c, style.worldRadius);
}

bool followsBodies(const core::SimParams& p) {
  return core::runsLocalRule(p) && p.boundary == core::Boundary::Open;
}

OpenFollow::OpenFollow(const core::Bodies& framed) {
  double cx = 0, cy = 0, cz = 0;
  for (const core::Vec4& q : framed.pos) cx += q.x, cy += q.y, cz += q.z;
  const double n = double(std::max<size_t>(1, framed.size()));
  last = glm::vec3(float(cx / n), float(cy / n), float(cz / n));
}

void followOpenWorld(render::Camera& camera, core::Engine& engine, OpenFollow& f) {
  if (!followsBodies(engine.params()) || engine.numBodies() == 0) return;
  const OpenFollow now(engine.readBodies());
  camera.setTarget(camera.target() + (now.last - f.last));
  f.last = now.last;
}

}  // namespace murmur::app
