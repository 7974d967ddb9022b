#version 450 core
// Oriented boids, stage 1: pass each body to the geometry shader, which builds its triangle.

#include "colour.glsl"

layout(location = 0) in vec4 a_position;  // xyz world position, w mass
layout(location = 1) in vec4 a_velocity;  // xyz velocity, w unused
layout(location = 2) in uint a_id;

uniform mat4 u_view;

out vec3 vg_velocity;
out vec3 vg_colour;

void main() {
  gl_Position = vec4(a_position.xyz, 1.0);  // world space; projected in the geometry shader
  vg_velocity = a_velocity.xyz;
  vec4 viewPos = u_view * vec4(a_position.xyz, 1.0);
  vg_colour = bodyColour(a_velocity.xyz, a_id) * depthCue(length(viewPos.xyz));
}
