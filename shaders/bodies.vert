#version 450 core
// Points and point sprites: one vertex per body, sized in the vertex shader.

#include "colour.glsl"

layout(location = 0) in vec4 a_position;  // xyz world position, w mass
layout(location = 1) in vec4 a_velocity;  // xyz velocity, w unused
layout(location = 2) in uint a_id;

uniform mat4 u_view;
uniform mat4 u_projection;
uniform float u_pointSize;   // pixels: the size of a point, the smallest size of a sprite
uniform float u_spriteSize;  // world units: sprite diameter; 0 draws fixed-size points
uniform float u_viewportHeight;

out vec3 v_colour;

void main() {
  vec4 viewPos = u_view * vec4(a_position.xyz, 1.0);
  gl_Position = u_projection * viewPos;
  float viewDistance = length(viewPos.xyz);
  v_colour = bodyColour(a_velocity.xyz, a_id) * depthCue(viewDistance);

  float size = u_pointSize;
  if (u_spriteSize > 0.0) {
    // Perspective size: world diameter times pixels per world unit at this depth.
    float pixelsPerUnit = 0.5 * u_viewportHeight * u_projection[1][1] / max(-viewPos.z, 1e-6);
    size = max(u_pointSize, u_spriteSize * pixelsPerUnit);
  }
  gl_PointSize = size;
}
