#version 450 core
// Round, soft-edged point sprites. Blended additively (src alpha, one), so dense regions such as a
// galaxy's core glow brighter; the renderer draws them without depth writes.

in vec3 v_colour;
out vec4 o_colour;

uniform float u_spriteAlpha;  // peak opacity at the sprite's centre, 0..1

void main() {
  vec2 d = gl_PointCoord * 2.0 - 1.0;
  float r2 = dot(d, d);
  if (r2 > 1.0) discard;
  // Gaussian falloff, near zero at the rim so overlapping sprites show no hard circles.
  float a = exp(-4.0 * r2) * u_spriteAlpha;
  o_colour = vec4(v_colour, a);
}
