#version 450 core
// Oriented boids, stage 2: one triangle per body, pointing along its velocity. The triangle lies in
// the plane that contains the heading and faces the camera as well as it can, so it is never seen
// edge-on. The body's position is inside the triangle (on its axis, 40% of the way from the base).

layout(points) in;
layout(triangle_strip, max_vertices = 3) out;

in vec3 vg_velocity[];
in vec3 vg_colour[];

uniform mat4 u_view;
uniform mat4 u_projection;
uniform vec3 u_eye;             // camera position, world units
uniform float u_bodySize;       // triangle length, world units
uniform float u_pointSize;      // pixels: triangles never get shorter than this on screen
uniform float u_viewportHeight; // pixels

out vec3 v_colour;

void emit(vec3 world, vec3 colour) {
  gl_Position = u_projection * (u_view * vec4(world, 1.0));
  v_colour = colour;
  EmitVertex();
}

void main() {
  vec3 p = gl_in[0].gl_Position.xyz;
  vec3 toEye = u_eye - p;
  float eyeDistance = max(length(toEye), 1e-6);
  toEye /= eyeDistance;

  // A body at rest, or one flying straight at the camera, has no usable screen heading: fall back to
  // the camera's up axis so that it still shows as a triangle.
  vec3 heading = vg_velocity[0];
  float speed = length(heading);
  vec3 cameraUp = vec3(u_view[0][1], u_view[1][1], u_view[2][1]);
  heading = speed > 0.0 ? heading / speed : cameraUp;
  vec3 side = cross(heading, toEye);
  if (dot(side, side) < 1e-6) {
    heading = cameraUp;
    side = cross(heading, toEye);
  }
  side = normalize(side);

  // Keep far boids at least u_pointSize pixels long, so a zoomed-out flock stays visible.
  float pixelsPerUnit = 0.5 * u_viewportHeight * u_projection[1][1] / eyeDistance;
  float len = max(u_bodySize, u_pointSize / max(pixelsPerUnit, 1e-12));

  vec3 tip = p + heading * (0.6 * len);
  vec3 base = p - heading * (0.4 * len);
  vec3 halfWidth = side * (0.28 * len);
  vec3 colour = vg_colour[0];
  // The tail is darker than the tip: the heading reads even where triangles are a few pixels.
  emit(base + halfWidth, colour * 0.55);
  emit(base - halfWidth, colour * 0.55);
  emit(tip, colour);
  EndPrimitive();
}
