// Draws the bodies from GL buffers, into an offscreen framebuffer (headless: screenshots, video,
// tests) or into the window's default framebuffer.
//
// The body buffers are plain GL buffer objects that the renderer owns, one attribute per buffer:
//   position: vec4 per body (xyz world position, w mass)  -> 16 bytes, same layout as core::Vec4
//   velocity: vec4 per body (xyz velocity, w unused)      -> 16 bytes
//   id:       uint32 per body                              ->  4 bytes
// Two ways fill them each frame: CUDA-GL interop (the CUDA engine registers the buffer names below
// with cudaGraphicsGLRegisterBuffer and writes into them; no copy through the host), or upload()
// from host arrays (Mesa, the CPU engine). Bodies may be in any order: every draw mode is
// order-independent, and colour by id follows a body through the coherent pipeline's reordering.
//
// Every member function needs the renderer's GL context to be current on the calling thread.
#pragma once
#include "render/module_guard.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/hd.h"
#include "render/camera.h"
#include "render/shader.h"

namespace murmur::render {

enum class DrawMode : int {
  Boids = 0,    // oriented triangles along the velocity, bodySize world units long
  Points = 1,   // square points, pointSize pixels wide
  Sprites = 2,  // round soft-edged sprites, bodySize world units wide, blended additively
  Splat = 3,    // rasterised in compute with a per-pixel depth resolve (render/splat_renderer.h)
};
enum class ColourMode : int {
  Velocity = 0,  // rgb = |v| per axis / |v|: the heading
  Speed = 1,     // colour ramp over |v| / speedScale
  Id = 2,        // a hue hashed from the body's id
};
constexpr int kNumDrawModes = 4;
constexpr int kNumColourModes = 3;

// "boids", "points", "sprites", "splat" / "velocity", "speed", "id".
const char* toString(DrawMode v);
const char* toString(ColourMode v);
// Parses the lower-case names above; false when unknown (out untouched).
bool parse(const std::string& s, DrawMode& out);
bool parse(const std::string& s, ColourMode& out);
// The next mode in the order above, wrapping (the D and C keys).
DrawMode next(DrawMode v);
ColourMode next(ColourMode v);

// Background: near-black with a touch of blue, RGBA in 0..1.
constexpr float kBackground[4] = {0.02f, 0.02f, 0.04f, 1.0f};

// What Renderer::drawOverlay draws over a frame, in every draw mode.
struct OverlayStyle {
  // The world's box: the cube [-boxHalfSize, boxHalfSize]^3 as twelve thin lines; <= 0: none.
  // boxHalfDepth >= 0 takes z to [-boxHalfDepth, boxHalfDepth] instead (0: the square of a 2D world).
  float boxHalfSize = 0.0f;
  float boxHalfDepth = -1.0f;
  // Depth dimming of the box's far edges, as draw() dims the bodies: over the scene sphere of this
  // radius around the camera's target, down to (1 - fog) at its far side. worldRadius <= 0: none.
  float worldRadius = 0.0f;
  float fog = 0.55f;
  // The colour legend in the bottom-right corner: a ball of heading colours (velocity), the speed
  // ramp with its two ends written under it (speed), a row of id hues (id), each with its name.
  bool legend = false;
  ColourMode colour = ColourMode::Velocity;
  float speedFloor = 0.0f, speedScale = 1.0f;  // the speed ramp's ends (draw()'s speed scale and floor)
  bool plane = false;  // a 2D world: the velocity legend is a flat colour wheel (draw()'s setPlane)
};

// Where drawOverlay puts the legend's colour swatch in a width x height drawn area: x0, y0, x1, y1
// in pixels from its bottom-left corner (the heading ball fills its square). Grows with the
// height from 1440 pixels, so that a large frame's legend stays readable.
glm::vec4 legendSwatch(ColourMode colour, int width, int height);

// The box's colour at the front of the scene, rgb 0..1: dim, so that it never competes with a
// flock; the lines are added to the picture, brightening what they cross without hiding it.
constexpr float kBoxColour[3] = {0.24f, 0.27f, 0.36f};

class Renderer {
 public:
  // Builds every program (throws std::runtime_error naming the shader file on a compile or link
  // error) and creates the body buffers, empty. Draws into the window (default framebuffer) until
  // setOffscreenTarget() is called.
  explicit Renderer(const ShaderSource& shaders = ShaderSource());
  ~Renderer();
  Renderer(const Renderer&) = delete;
  Renderer& operator=(const Renderer&) = delete;

  // The programs the renderer uses; the tests compile each one.
  static const std::vector<ProgramDesc>& programs();

  // --- Body buffers -------------------------------------------------------------------------------
  // Sets the number of bodies drawn. When it changes, the buffers are replaced by new ones of exactly
  // that size (immutable storage, GL_DYNAMIC_STORAGE_BIT): the buffer names change and
  // bufferGeneration() increments, so an interop client must register the new names. Contents are
  // undefined until written. Throws std::runtime_error saying how many bytes were asked for when
  // the GL runs out of memory.
  void resize(size_t numBodies);
  size_t numBodies() const { return numBodies_; }
  // Bytes of GL buffer memory per body (position + velocity + id).
  static constexpr size_t kBytesPerBody = 2 * sizeof(core::Vec4) + sizeof(uint32_t);

  // Host fallback: copies n bodies into the buffers with glNamedBufferSubData (resizing first when
  // n != numBodies()). Pointers may be null only when n == 0.
  void upload(const core::Vec4* pos, const core::Vec4* vel, const uint32_t* id, size_t n);
  void upload(const core::Bodies& bodies) {
    upload(bodies.pos.data(), bodies.vel.data(), bodies.id.data(), bodies.size());
  }

  // GL buffer names, for cudaGraphicsGLRegisterBuffer. Valid until the next resize() that changes
  // the size. Never 0 (an empty renderer still holds one-body buffers).
  unsigned int positionBuffer() const { return positionBuffer_; }
  unsigned int velocityBuffer() const { return velocityBuffer_; }
  unsigned int idBuffer() const { return idBuffer_; }
  // Increments whenever the buffer names change.
  uint64_t bufferGeneration() const { return generation_; }

  // --- Render target ------------------------------------------------------------------------------
  // Draw into an offscreen framebuffer of this size: RGBA8 colour and 24-bit depth. samples > 1
  // renders multisampled and resolves in readPixels(). Recreated only when the size or the sample
  // count changes. Throws std::runtime_error if the driver rejects the framebuffer.
  void setOffscreenTarget(int width, int height, int samples = 1);
  // Draw into the default framebuffer (the window's back buffer).
  void setWindowTarget();
  bool offscreen() const { return fbo_ != 0; }
  int targetWidth() const { return fboWidth_; }    // 0 when drawing to the window
  int targetHeight() const { return fboHeight_; }  // 0 when drawing to the window

  // --- Drawing ------------------------------------------------------------------------------------
  // |v| that maps to the hot end of the speed colour ramp (world units per time unit); the boids'
  // maxSpeed is the natural choice. Default 1.
  void setSpeedScale(float speedScale) { speedScale_ = speedScale; }
  float speedScale() const { return speedScale_; }
  // |v| at the cold end of the ramp (default 0). Boids mostly fly near their speed limit; a floor
  // near the slowest of them spreads the ramp over the speeds actually present.
  void setSpeedFloor(float speedFloor) { speedFloor_ = speedFloor; }
  float speedFloor() const { return speedFloor_; }
  // Peak opacity of a sprite at its centre (0..1, default 0.8). Lower it for millions of bodies.
  void setSpriteAlpha(float alpha) { spriteAlpha_ = alpha; }
  float spriteAlpha() const { return spriteAlpha_; }
  // Depth cue (0..1, default 0.55, as the splat's fog): bodies on the far side of the scene sphere
  // are drawn at (1 - fog) of their brightness; 0 turns it off.
  void setFog(float fog) { fog_ = fog; }
  // A 2D world (--dims 2): headings coloured by their direction in the plane, the whole hue circle.
  void setPlane(bool plane) { plane_ = plane; }
  float fog() const { return fog_; }

  // Where the drawn area starts in the window, in pixels from the bottom-left corner: the window
  // keeps its left strip for the panel and centres the view in the rest. Offscreen targets always
  // start at (0, 0). Applies to draw() and readPixels().
  void setViewportOrigin(int x, int y) {
    viewportX_ = x;
    viewportY_ = y;
  }

  // Where the drawn area starts in the current target (the window's origin, 0 offscreen).
  int drawOriginX() const { return fbo_ ? 0 : viewportX_; }
  int drawOriginY() const { return fbo_ ? 0 : viewportY_; }

  // The framebuffer draw() renders into (0: the window's); the splat pass draws into it too.
  unsigned int framebuffer() const { return fbo_; }

  // Clears the current target to kBackground and draws numBodies() bodies. DrawMode::Splat is not
  // drawn here (SplatRenderer draws it): std::invalid_argument.
  //   width, height: viewport in pixels (the offscreen target's size, or the window's framebuffer)
  //   pointSize:     pixels; the size of a point, and the smallest on-screen size of boids and
  //                  sprites (so a zoomed-out flock stays visible)
  //   bodySize:      world units; boid triangle length, sprite diameter
  //   worldRadius:   world units; radius of the scene around the camera's target, for depth dimming
  //                  (bodies on its far side are drawn at 1 - fog() of their brightness); <= 0
  //                  turns that off
  void draw(const Camera& camera, DrawMode drawMode, ColourMode colourMode, int width, int height,
            float pointSize, float bodySize, float worldRadius);

  // Draws the overlay into the current target over what it holds (after draw() or the splat pass,
  // which leaves the splat keys untouched): the same area, viewport and matrices as draw(). Writes
  // neither depth nor anything but colour; a dozen line segments and a few hundred small quads (the legend's
  // lettering) per frame.
  void drawOverlay(const Camera& camera, const OverlayStyle& style, int width, int height);

  // The current target's pixels, RGBA8, top row first (as image files store them). Reads the
  // window's back buffer when drawing to the window, so call it before swapping.
  std::vector<uint8_t> readPixels(int width, int height);

 private:
  void createBuffers(size_t capacity);
  void deleteBuffers();
  void deleteFramebuffers();

  ShaderProgram boidsProgram_, pointsProgram_, spritesProgram_;
  // The overlay (render/overlay.cpp): interleaved vertices (xyz, rgba), rebuilt each frame.
  ShaderProgram overlayProgram_, legendProgram_;
  unsigned int overlayVao_ = 0, overlayBuffer_ = 0;
  size_t overlayCapacity_ = 0;  // vertices the buffer holds
  std::vector<float> overlayVertices_;
  unsigned int vao_ = 0;
  unsigned int positionBuffer_ = 0, velocityBuffer_ = 0, idBuffer_ = 0;
  size_t numBodies_ = 0;
  uint64_t generation_ = 0;

  unsigned int fbo_ = 0, colourRb_ = 0, depthRb_ = 0;  // drawn into (multisampled if samples_ > 1)
  unsigned int resolveFbo_ = 0, resolveRb_ = 0;        // single-sample copy for readPixels
  int fboWidth_ = 0, fboHeight_ = 0, samples_ = 1;

  float speedScale_ = 1.0f;
  float speedFloor_ = 0.0f;
  float spriteAlpha_ = 0.8f;
  float fog_ = 0.55f;
  bool plane_ = false;
  int viewportX_ = 0, viewportY_ = 0;
};

}  // namespace murmur::render
