#version 450 core
// The legend's swatch, coloured by the bodies' own function (colour.glsl), so it cannot disagree
// with them:
//   velocity: a ball of headings. The point of the disc at screen direction (x, y) and facing the
//             eye by sqrt(1 - x^2 - y^2) has the colour of a body flying that way, seen from the
//             camera as it is now: a boid that crosses the screen to the right has the colour of
//             the ball's right edge, one that comes at the eye the colour of its centre.
//             In the plane (u_plane): a flat colour wheel, the hue of a body flying in the
//             screen direction from the centre, white at the centre.
//   speed:    the ramp from u_speedFloor (left) to u_speedScale (right).
//   id:       a row of the hues that ids hash to (the colour names one body, nothing more).

#include "colour.glsl"

in vec2 v_uv;

uniform mat4 u_viewToWorld;  // the camera's rotation, view -> world
uniform int u_idSwatches;    // cells of the id row

out vec4 o_colour;

void main() {
  vec3 colour;
  if (u_colourMode == kColourVelocity) {
    vec2 d = v_uv * 2.0 - 1.0;
    float r2 = dot(d, d);
    if (r2 > 1.0) discard;
    if (u_plane != 0)
      colour = mix(vec3(1.0), bodyColour(mat3(u_viewToWorld) * vec3(d, 0.0), 0u), smoothstep(0.0, 0.45, sqrt(r2)));
    else
      colour = bodyColour(mat3(u_viewToWorld) * vec3(d, sqrt(1.0 - r2)), 0u);
  } else if (u_colourMode == kColourSpeed) {
    colour = bodyColour(vec3(mix(u_speedFloor, u_speedScale, v_uv.x), 0.0, 0.0), 0u);
  } else {
    colour = bodyColour(vec3(1.0, 0.0, 0.0), uint(min(v_uv.x, 0.9999) * float(u_idSwatches)));
  }
  o_colour = vec4(colour, 1.0);
}
