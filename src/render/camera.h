// Orbit camera: the eye moves on a sphere around a target point. Angles in radians, lengths in
// world units. Plain value type; no GL.
#pragma once
#include "render/module_guard.h"

#include <glm/glm.hpp>

namespace murmur::render {

class Camera {
 public:
  // Looks at the origin from +z, fitted to a sphere of radius 100 (the default boids world).
  Camera();

  // Points the camera at a sphere so that all of it is in view, keeping the current angles, and
  // makes this the state home() returns to. Also sets the clip planes for that scene size.
  void fitBounds(const glm::vec3& center, float radius);
  // Points the camera at the cube of this half-size around `center`, keeping the current angles,
  // as close as keeps all eight corners in a view of this aspect (width / height) or wider, with a
  // small margin: the cube fills the frame from any angle (fitBounds' sphere leaves an oblique
  // cube small). Clip planes and zoom range as fitBounds(center, the cube's half-diagonal).
  // halfDepth >= 0: the box's z half-extent instead of halfSize (0: a square, as a 2D world's).
  void fitBox(const glm::vec3& center, float halfSize, float aspect, float halfDepth = -1.0f);
  // Back to the view set by the last fitBounds or fitBox (or the constructor): target, distance and angles.
  void home();

  // Rotates around the target: yaw about world +y, pitch towards the poles (clamped short of
  // them, so the view never flips).
  void orbit(float deltaYaw, float deltaPitch);
  // Multiplies the distance to the target by `factor` (< 1 moves closer); clamped to a range
  // around the fitted scene size.
  void zoom(float factor);
  // Moves the target (and the eye with it) in the view plane so that the scene follows a drag:
  // dx > 0 moves the scene right on screen, dy > 0 moves it up. dx, dy are fractions of the view
  // height (a drag of the full window height moves the scene by one view height at the target).
  void pan(float dx, float dy);

  // World -> view (right-handed, looking down -z).
  glm::mat4 view() const;
  // View -> clip; aspect = width / height.
  glm::mat4 projection(float aspect) const;
  // Eye position in world units.
  glm::vec3 eye() const;

  float yaw() const { return yaw_; }
  float pitch() const { return pitch_; }
  float distance() const { return distance_; }
  const glm::vec3& target() const { return target_; }
  float fovY() const { return fovY_; }        // vertical field of view, radians
  float sceneRadius() const { return sceneRadius_; }

  void setYaw(float yaw) { yaw_ = yaw; }
  void setPitch(float pitch);                 // clamped as in orbit()
  void setDistance(float distance);           // clamped as in zoom()
  void setTarget(const glm::vec3& target) { target_ = target; }

 private:
  float yaw_ = 0.0f;    // about +y; 0 puts the eye on +z of the target
  float pitch_ = 0.0f;  // positive puts the eye above the target
  float distance_ = 1.0f;
  glm::vec3 target_{0.0f};
  float fovY_;
  float sceneRadius_ = 1.0f;  // radius given to fitBounds: sets the clip planes and zoom range

  // State restored by home().
  float homeYaw_ = 0.0f, homePitch_ = 0.0f, homeDistance_ = 1.0f;
  glm::vec3 homeTarget_{0.0f};
};

}  // namespace murmur::render
