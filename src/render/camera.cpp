#include "render/camera.h"

#include <algorithm>
#include <cmath>

#include <glm/gtc/matrix_transform.hpp>

namespace murmur::render {
namespace {

constexpr float kDefaultFovY = 0.7853982f;  // 45 degrees
// Pitch stops short of the poles: at +-90 degrees the up vector is parallel to the view direction
// and lookAt degenerates.
constexpr float kMaxPitch = 1.5533430f;  // 89 degrees
// Zoom range, in multiples of the fitted scene radius.
constexpr float kMinDistanceFactor = 1e-3f;
constexpr float kMaxDistanceFactor = 50.0f;

}  // namespace

Camera::Camera() : fovY_(kDefaultFovY) { fitBounds(glm::vec3(0.0f), 100.0f); }

void Camera::fitBounds(const glm::vec3& center, float radius) {
  sceneRadius_ = radius > 0.0f ? radius : 1.0f;
  target_ = center;
  // The sphere touches the top and bottom of the view (the narrower side for aspect >= 1), with
  // 5% margin.
  distance_ = 1.05f * sceneRadius_ / std::sin(0.5f * fovY_);
  homeYaw_ = yaw_;
  homePitch_ = pitch_;
  homeDistance_ = distance_;
  homeTarget_ = target_;
}

void Camera::fitBox(const glm::vec3& center, float halfSize, float aspect, float halfDepth) {
  const float hz = halfDepth >= 0.0f ? halfDepth : halfSize;
  fitBounds(center, halfSize * 1.7320508f);
  // The view's rotation does not depend on the distance. A corner at view offset c from the target
  // is in view when |c.y| <= tan(fov / 2) (d - c.z), and likewise for x with the aspect.
  const glm::mat3 rotation(view());
  const float t = 0.94f * std::tan(0.5f * fovY_);  // 6% margin
  const float a = aspect > 0.0f ? aspect : 1.0f;
  float d = 0.0f;
  for (int i = 0; i < 8; ++i) {
    const glm::vec3 c = rotation * glm::vec3(i & 1 ? halfSize : -halfSize, i & 2 ? halfSize : -halfSize, i & 4 ? hz : -hz);
    d = std::max({d, c.z + std::abs(c.y) / t, c.z + std::abs(c.x) / (t * a)});
  }
  if (d > 0.0f) distance_ = homeDistance_ = d;
}

void Camera::home() {
  yaw_ = homeYaw_;
  pitch_ = homePitch_;
  distance_ = homeDistance_;
  target_ = homeTarget_;
}

void Camera::orbit(float deltaYaw, float deltaPitch) {
  // Keep yaw in (-2pi, 2pi) so that hours of orbiting do not lose float precision.
  yaw_ = std::fmod(yaw_ + deltaYaw, 6.2831853f);
  setPitch(pitch_ + deltaPitch);
}

void Camera::setPitch(float pitch) { pitch_ = std::clamp(pitch, -kMaxPitch, kMaxPitch); }

void Camera::zoom(float factor) {
  if (factor > 0.0f && std::isfinite(factor)) setDistance(distance_ * factor);
}

void Camera::setDistance(float distance) {
  distance_ = std::clamp(distance, kMinDistanceFactor * sceneRadius_, kMaxDistanceFactor * sceneRadius_);
}

void Camera::pan(float dx, float dy) {
  // One view height at the target's depth, in world units.
  const float viewHeight = 2.0f * distance_ * std::tan(0.5f * fovY_);
  const glm::mat4 v = view();
  const glm::vec3 right(v[0][0], v[1][0], v[2][0]);
  const glm::vec3 up(v[0][1], v[1][1], v[2][1]);
  // The scene follows the drag, so the camera (target and eye) moves the opposite way.
  target_ -= (dx * right + dy * up) * viewHeight;
}

glm::vec3 Camera::eye() const {
  const float c = std::cos(pitch_);
  return target_ + distance_ * glm::vec3(c * std::sin(yaw_), std::sin(pitch_), c * std::cos(yaw_));
}

glm::mat4 Camera::view() const { return glm::lookAt(eye(), target_, glm::vec3(0.0f, 1.0f, 0.0f)); }

glm::mat4 Camera::projection(float aspect) const {
  // Clip planes enclose the scene sphere (twice its radius, for bodies that wander outside the
  // fitted bounds) wherever the eye is, with the near plane never closer than a small fraction of
  // the distance (depth precision).
  const float reach = 2.0f * sceneRadius_;
  const float nearPlane = std::max(distance_ - reach, 1e-3f * distance_);
  const float farPlane = distance_ + reach;
  return glm::perspective(fovY_, aspect > 0.0f ? aspect : 1.0f, nearPlane, farPlane);
}

}  // namespace murmur::render
