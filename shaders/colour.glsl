// Body colouring shared by every draw mode (pulled in with #include by the vertex shaders).
// Colours stay clearly above the near-black background at any speed, so no body disappears.

const int kColourVelocity = 0;  // rgb = |v| per axis / |v|: the heading, independent of speed
const int kColourSpeed = 1;     // colour ramp over |v| from u_speedFloor to u_speedScale
const int kColourId = 2;        // a hue hashed from the body's id: follows one body through a reorder

uniform int u_colourMode;
uniform float u_speedScale;  // |v| that maps to the hot end of the speed ramp (world units / time)
uniform float u_speedFloor;  // |v| that maps to the cold end (0 unless the speeds present sit in a band)
uniform float u_depthNear;   // view distance at which depth dimming starts (world units)
uniform float u_depthRange;  // distance over which it reaches full strength; <= 0 turns it off
uniform float u_fog;         // 0..1: how much the far side of the scene fades (the splat's --fog)
uniform int u_plane;         // 1: a 2D world (--dims 2), headings coloured by their direction in the plane

// A dark blue -> cyan -> green -> yellow -> red ramp; slow bodies stay visible on the background.
vec3 speedRamp(float t) {
  const vec3 stops[5] = vec3[5](vec3(0.16, 0.22, 0.85), vec3(0.10, 0.70, 0.95), vec3(0.30, 0.95, 0.40),
                                vec3(1.00, 0.85, 0.20), vec3(1.00, 0.28, 0.15));
  float x = clamp(t, 0.0, 1.0) * 4.0;
  int i = min(int(x), 3);
  return mix(stops[i], stops[i + 1], x - float(i));
}

// Integer hash (Wang/Jenkins style): neighbouring ids get unrelated hues.
uint hashId(uint x) {
  x = (x ^ 61u) ^ (x >> 16);
  x *= 9u;
  x ^= x >> 4;
  x *= 0x27d4eb2du;
  x ^= x >> 15;
  return x;
}

vec3 hueToRgb(float h) {
  vec3 k = abs(fract(vec3(h) + vec3(0.0, 2.0 / 3.0, 1.0 / 3.0)) * 6.0 - 3.0);
  return clamp(k - 1.0, 0.0, 1.0);
}

// The hue of a unit direction u of a plane: three primaries 120 degrees apart mixed by the cosine
// to each, stretched so the strongest is full: the whole hue circle (core/splat.h directionHue).
vec3 directionHue(vec2 u) {
  vec3 c = clamp(0.5 + 1.2 * vec3(u.x, -0.5 * u.x + 0.8660254 * u.y, -0.5 * u.x - 0.8660254 * u.y), 0.0, 1.0);
  return c / max(c.r, max(c.g, c.b));
}

vec3 bodyColour(vec3 velocity, uint id) {
  if (u_colourMode == kColourSpeed) {
    return speedRamp((length(velocity) - u_speedFloor) / max(u_speedScale - u_speedFloor, 1e-20));
  }
  if (u_colourMode == kColourId) {
    // Desaturate a little: pure primaries look harsh at high density.
    return mix(vec3(1.0), hueToRgb(float(hashId(id) & 0xffffu) / 65536.0), 0.75);
  }
  if (u_plane != 0) {
    // The plane: the heading's direction all the way round the hue circle.
    float planar = length(velocity.xy);
    return planar > 0.0 ? directionHue(velocity.xy / planar) : vec3(0.6);
  }
  float speed = length(velocity);
  // A body at rest has no heading; grey keeps it visible.
  return speed > 0.0 ? abs(velocity) / speed : vec3(0.6);
}

// Dims bodies with their distance across the scene sphere so depth reads in a still frame, as the
// splat's fog does: down to (1 - u_fog) at the far side (45% at the default 0.55).
float depthCue(float viewDistance) {
  if (u_depthRange <= 0.0) return 1.0;
  return mix(1.0, 1.0 - clamp(u_fog, 0.0, 1.0), clamp((viewDistance - u_depthNear) / u_depthRange, 0.0, 1.0));
}
