// How a scene is framed and drawn by default, shared by the window and the offscreen view.
#pragma once

#include <string>

#include "core/bodies.h"
#include "core/engine.h"
#include "core/params.h"
#include "render/camera.h"
#include "render/renderer.h"
#include "render/splat_renderer.h"

namespace murmur::app {

// From this many bodies the default draw mode is the splat renderer: the GL modes' cost grows
// with N through the raster path, the splat's barely (measurements: docs/performance.md#rendering).
constexpr size_t kSplatDefaultMinBodies = 250000;

struct ViewStyle {
  render::DrawMode draw = render::DrawMode::Boids;
  render::ColourMode colour = render::ColourMode::Velocity;
  float pointSize = 2.0f;    // pixels
  float bodySize = 1.0f;     // world units
  float worldRadius = 100;   // world units, for depth dimming
  float speedScale = 1.0f;   // |v| at the hot end of the speed ramp
  float speedFloor = 0.0f;   // |v| at the cold end
  float spriteAlpha = 0.8f;
  render::SplatStyle splat;  // DrawMode::Splat (its colour follows `colour`)
  bool warpReduce = false;   // splat on CUDA: per-warp pre-reduction before the atomic
  // Drawn over the frame in every draw mode (render::OverlayStyle): the world's box, whose
  // half-size frameScene sets (boids: the wrapped cube; gravity has none), when `box` is on.
  bool box = true;
  float boxHalfSize = 0;     // world units; 0: no box
  float boxHalfDepth = -1;   // z half-extent when >= 0 (0: a 2D world's square), else boxHalfSize
  bool plane = false;        // a 2D world: headings coloured by their direction in the plane
  bool legend = true;        // the colour mode's legend in the bottom-right corner
};

// What the renderer draws over the frame for this style (Renderer::drawOverlay).
render::OverlayStyle overlayStyle(const ViewStyle& style);

// The boids' starting view: the eye this far round from +z towards +x and up from the equator
// (radians), so the world's cube shows three faces.
constexpr float kBoidsViewYaw = 0.55f;
constexpr float kBoidsViewPitch = 0.42f;

// Applies the splat options of the command line (--slab, --fog, --edl, --warp-reduce; negative
// fog or edl: keep the default).
void applySplatOptions(ViewStyle& style, float slab, float fog, float edl, bool warpReduce);

// Default style for a force mode and body count; drawName/colourName ("" = default) override.
ViewStyle defaultStyle(const core::SimParams& p, const core::Bodies& bodies, const std::string& drawName,
                       const std::string& colourName);
// The same for n bodies of which `bodies` holds the state or nothing: boids need only their count;
// gravity's speed ramp samples the velocities.
ViewStyle defaultStyle(const core::SimParams& p, size_t n, const core::Bodies& bodies, const std::string& drawName,
                       const std::string& colourName);

// Spreads the speed ramp over the speeds present in `bodies` (2nd to 98th percentile of a sample),
// or from 0 to the boids' speed limit (the gravity default for gravity) when they are all alike.
void fitSpeedRange(const core::Bodies& bodies, const core::SimParams& p, ViewStyle& style);

// Points the camera at the scene: the world cube for boids (from kBoidsViewYaw/Pitch, the cube
// filling the frame), the bulk of the bodies for gravity (keeping the camera's angles).
// An open world's boids (--boundary open) are framed as gravity's bodies are, with no box.
void frameScene(render::Camera& camera, const core::Bodies& bodies, const core::SimParams& p, ViewStyle& style);

// Whether the view follows the bodies: boids in an open world, which go where they fly.
bool followsBodies(const core::SimParams& p);
// The camera's target moves with the bodies' centroid, by its move since the last call (so that a
// pan stays); reads the bodies (a download on the CUDA engine) and does nothing unless
// followsBodies.
struct OpenFollow {
  OpenFollow() = default;
  explicit OpenFollow(const core::Bodies& framed);  // the centroid frameScene framed
  glm::vec3 last{0.0f};                             // the bodies' centroid at the last call
};
void followOpenWorld(render::Camera& camera, core::Engine& engine, OpenFollow& f);

}  // namespace murmur::app
