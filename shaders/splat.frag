#version 450 core
// Shows the splat renderer's frame: one 64-bit key per pixel (depth bits high, RGBA8 low; see
// src/core/splat.h), written by CUDA through interop or uploaded from the CPU executor.
//
// Eye-dome lighting: a pixel whose neighbours are nearer to the eye is darkened by how much
// nearer (in log depth). Silhouettes of flocks in front of others get a dark rim, so depth and
// shape read in a still frame even when every body is one pixel. Empty neighbours add nothing,
// so a lone body keeps its colour.

layout(std430, binding = 0) readonly buffer Keys {
  uvec2 keys[];  // .x: RGBA8 (low word), .y: depth bits (high word); 0xffffffff: empty
};

uniform ivec2 u_size;         // frame size in pixels (the buffer's row length and row count)
uniform ivec2 u_origin;       // window position of the frame's bottom-left pixel
uniform vec3 u_background;
uniform float u_edlStrength;  // 0 turns eye-dome lighting off
uniform float u_edlRadius;    // pixels between a pixel and the neighbours it compares with

out vec4 fragColour;

float logDepth(uint bits) { return log2(uintBitsToFloat(bits)); }

void main() {
  ivec2 p = ivec2(gl_FragCoord.xy) - u_origin;
  if (any(lessThan(p, ivec2(0))) || p.x >= u_size.x || p.y >= u_size.y) {
    fragColour = vec4(u_background, 1.0);
    return;
  }
  uvec2 k = keys[p.y * u_size.x + p.x];
  if (k.y == 0xffffffffu) {
    fragColour = vec4(u_background, 1.0);
    return;
  }
  vec3 colour = unpackUnorm4x8(k.x).rgb;
  if (u_edlStrength > 0.0) {
    float d = logDepth(k.y);
    float sum = 0.0;
    const ivec2 offsets[4] = ivec2[4](ivec2(1, 0), ivec2(-1, 0), ivec2(0, 1), ivec2(0, -1));
    int r = max(1, int(u_edlRadius));
    for (int i = 0; i < 4; ++i) {
      ivec2 q = clamp(p + offsets[i] * r, ivec2(0), u_size - 1);
      uvec2 n = keys[q.y * u_size.x + q.x];
      if (n.y != 0xffffffffu) sum += max(0.0, d - logDepth(n.y));
    }
    colour *= exp(-u_edlStrength * 300.0 * sum / 4.0);
  }
  fragColour = vec4(colour, 1.0);
}
