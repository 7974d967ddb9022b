#version 450 core
// The legend's colour swatch: one quad over u_rect (a triangle strip made from gl_VertexID).

uniform mat4 u_projection;  // pixels of the drawn area -> clip
uniform vec4 u_rect;        // x0, y0, x1, y1 in pixels from the drawn area's bottom-left corner

out vec2 v_uv;  // 0..1 across the rect, (0, 0) at its bottom-left

void main() {
  vec2 c = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
  v_uv = c;
  gl_Position = u_projection * vec4(mix(u_rect.xy, u_rect.zw, c), 0.0, 1.0);
}
