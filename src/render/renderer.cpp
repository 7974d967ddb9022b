#include "render/renderer.h"

#include <glad/gl.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <glm/gtc/matrix_transform.hpp>

namespace murmur::render {
namespace {

// Attribute locations and vertex-buffer binding points (one buffer per attribute).
constexpr GLuint kPositionSlot = 0;
constexpr GLuint kVelocitySlot = 1;
constexpr GLuint kIdSlot = 2;

// Drains the GL error queue so that the next check sees only what the following calls raised.
void clearGlErrors() {
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }
}

std::string mib(size_t bytes) {
  std::ostringstream s;
  s.precision(1);
  s << std::fixed << static_cast<double>(bytes) / (1024.0 * 1024.0) << " MiB";
  return s.str();
}

}  // namespace

const char* toString(DrawMode v) {
  switch (v) {
    case DrawMode::Boids: return "boids";
    case DrawMode::Points: return "points";
    case DrawMode::Sprites: return "sprites";
    case DrawMode::Splat: return "splat";
  }
  return "?";
}

const char* toString(ColourMode v) {
  switch (v) {
    case ColourMode::Velocity: return "velocity";
    case ColourMode::Speed: return "speed";
    case ColourMode::Id: return "id";
  }
  return "?";
}

bool parse(const std::string& s, DrawMode& out) {
  for (int i = 0; i < kNumDrawModes; ++i) {
    if (s == toString(static_cast<DrawMode>(i))) {
      out = static_cast<DrawMode>(i);
      return true;
    }
  }
  return false;
}

bool parse(const std::string& s, ColourMode& out) {
  for (int i = 0; i < kNumColourModes; ++i) {
    if (s == toString(static_cast<ColourMode>(i))) {
      out = static_cast<ColourMode>(i);
      return true;
    }
  }
  return false;
}

DrawMode next(DrawMode v) { return static_cast<DrawMode>((static_cast<int>(v) + 1) % kNumDrawModes); }
ColourMode next(ColourMode v) {
  return static_cast<ColourMode>((static_cast<int>(v) + 1) % kNumColourModes);
}

const std::vector<ProgramDesc>& Renderer::programs() {
  static const std::vector<ProgramDesc> kPrograms = {
      {"boids",
       {{GL_VERTEX_SHADER, "boids.vert"},
        {GL_GEOMETRY_SHADER, "boids.geom"},
        {GL_FRAGMENT_SHADER, "bodies.frag"}}},
      {"points", {{GL_VERTEX_SHADER, "bodies.vert"}, {GL_FRAGMENT_SHADER, "bodies.frag"}}},
      {"sprites", {{GL_VERTEX_SHADER, "bodies.vert"}, {GL_FRAGMENT_SHADER, "sprite.frag"}}},
      {"overlay", {{GL_VERTEX_SHADER, "overlay.vert"}, {GL_FRAGMENT_SHADER, "overlay.frag"}}},
      {"legend", {{GL_VERTEX_SHADER, "legend.vert"}, {GL_FRAGMENT_SHADER, "legend.frag"}}},
  };
  return kPrograms;
}

Renderer::Renderer(const ShaderSource& shaders) {
  const auto& descs = programs();
  boidsProgram_ = ShaderProgram::build(descs[0], shaders);
  pointsProgram_ = ShaderProgram::build(descs[1], shaders);
  spritesProgram_ = ShaderProgram::build(descs[2], shaders);
  overlayProgram_ = ShaderProgram::build(descs[3], shaders);
  legendProgram_ = ShaderProgram::build(descs[4], shaders);

  glCreateVertexArrays(1, &vao_);
  glEnableVertexArrayAttrib(vao_, kPositionSlot);
  glVertexArrayAttribFormat(vao_, kPositionSlot, 4, GL_FLOAT, GL_FALSE, 0);
  glVertexArrayAttribBinding(vao_, kPositionSlot, kPositionSlot);
  glEnableVertexArrayAttrib(vao_, kVelocitySlot);
  glVertexArrayAttribFormat(vao_, kVelocitySlot, 4, GL_FLOAT, GL_FALSE, 0);
  glVertexArrayAttribBinding(vao_, kVelocitySlot, kVelocitySlot);
  glEnableVertexArrayAttrib(vao_, kIdSlot);
  // I-format: the id reaches the shader as a uint, not converted to float (ids above 2^24 would
  // lose bits and change colour).
  glVertexArrayAttribIFormat(vao_, kIdSlot, 1, GL_UNSIGNED_INT, 0);
  glVertexArrayAttribBinding(vao_, kIdSlot, kIdSlot);

  createBuffers(0);
}

Renderer::~Renderer() {
  deleteFramebuffers();
  deleteBuffers();
  if (vao_) glDeleteVertexArrays(1, &vao_);
  if (overlayBuffer_) glDeleteBuffers(1, &overlayBuffer_);
  if (overlayVao_) glDeleteVertexArrays(1, &overlayVao_);
}

void Renderer::createBuffers(size_t numBodies) {
  // GL rejects zero-sized storage; an empty renderer keeps one-body buffers so that the names are
  // always valid.
  const size_t capacity = std::max<size_t>(numBodies, 1);
  const size_t vecBytes = capacity * sizeof(core::Vec4);
  const size_t idBytes = capacity * sizeof(uint32_t);

  clearGlErrors();
  GLuint names[3] = {0, 0, 0};
  glCreateBuffers(3, names);
  // Immutable storage: a fixed address for CUDA interop; DYNAMIC_STORAGE_BIT allows upload().
  glNamedBufferStorage(names[0], static_cast<GLsizeiptr>(vecBytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  glNamedBufferStorage(names[1], static_cast<GLsizeiptr>(vecBytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  glNamedBufferStorage(names[2], static_cast<GLsizeiptr>(idBytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  const GLenum err = glGetError();
  if (err != GL_NO_ERROR) {
    glDeleteBuffers(3, names);
    std::ostringstream msg;
    msg << "renderer: cannot allocate vertex buffers for " << numBodies << " bodies ("
        << mib(capacity * kBytesPerBody) << " of GPU memory; GL error 0x" << std::hex << err << ")";
    throw std::runtime_error(msg.str());
  }

  positionBuffer_ = names[0];
  velocityBuffer_ = names[1];
  idBuffer_ = names[2];
  numBodies_ = numBodies;
  ++generation_;
  glVertexArrayVertexBuffer(vao_, kPositionSlot, positionBuffer_, 0, sizeof(core::Vec4));
  glVertexArrayVertexBuffer(vao_, kVelocitySlot, velocityBuffer_, 0, sizeof(core::Vec4));
  glVertexArrayVertexBuffer(vao_, kIdSlot, idBuffer_, 0, sizeof(uint32_t));
}

void Renderer::deleteBuffers() {
  const GLuint names[3] = {positionBuffer_, velocityBuffer_, idBuffer_};
  if (names[0]) glDeleteBuffers(3, names);
  positionBuffer_ = velocityBuffer_ = idBuffer_ = 0;
}

void Renderer::resize(size_t numBodies) {
  if (numBodies == numBodies_ && positionBuffer_ != 0) return;
  // Free first: at 10M+ bodies the old and new buffers together may not fit.
  deleteBuffers();
  createBuffers(numBodies);
}

void Renderer::upload(const core::Vec4* pos, const core::Vec4* vel, const uint32_t* id, size_t n) {
  if (n != numBodies_) resize(n);
  if (n == 0) return;
  if (!pos || !vel || !id) throw std::invalid_argument("Renderer::upload: null body array");
  glNamedBufferSubData(positionBuffer_, 0, static_cast<GLsizeiptr>(n * sizeof(core::Vec4)), pos);
  glNamedBufferSubData(velocityBuffer_, 0, static_cast<GLsizeiptr>(n * sizeof(core::Vec4)), vel);
  glNamedBufferSubData(idBuffer_, 0, static_cast<GLsizeiptr>(n * sizeof(uint32_t)), id);
}

void Renderer::deleteFramebuffers() {
  const GLuint fbos[2] = {fbo_, resolveFbo_};
  const GLuint rbs[3] = {colourRb_, depthRb_, resolveRb_};
  glDeleteFramebuffers(2, fbos);  // zero names are ignored
  glDeleteRenderbuffers(3, rbs);
  fbo_ = colourRb_ = depthRb_ = resolveFbo_ = resolveRb_ = 0;
  fboWidth_ = fboHeight_ = 0;
  samples_ = 1;
}

void Renderer::setOffscreenTarget(int width, int height, int samples) {
  if (width <= 0 || height <= 0) {
    throw std::invalid_argument("renderer: offscreen target size " + std::to_string(width) + "x" +
                                std::to_string(height) + " must be positive");
  }
  samples = std::max(samples, 1);
  if (fbo_ && width == fboWidth_ && height == fboHeight_ && samples == samples_) return;
  deleteFramebuffers();

  GLint maxSamples = 1;
  glGetIntegerv(GL_MAX_SAMPLES, &maxSamples);
  samples = std::min(samples, std::max(maxSamples, 1));

  glCreateFramebuffers(1, &fbo_);
  glCreateRenderbuffers(1, &colourRb_);
  glCreateRenderbuffers(1, &depthRb_);
  if (samples > 1) {
    glNamedRenderbufferStorageMultisample(colourRb_, samples, GL_RGBA8, width, height);
    glNamedRenderbufferStorageMultisample(depthRb_, samples, GL_DEPTH_COMPONENT24, width, height);
  } else {
    glNamedRenderbufferStorage(colourRb_, GL_RGBA8, width, height);
    glNamedRenderbufferStorage(depthRb_, GL_DEPTH_COMPONENT24, width, height);
  }
  glNamedFramebufferRenderbuffer(fbo_, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, colourRb_);
  glNamedFramebufferRenderbuffer(fbo_, GL_DEPTH_ATTACHMENT, GL_RENDERBUFFER, depthRb_);
  GLenum status = glCheckNamedFramebufferStatus(fbo_, GL_FRAMEBUFFER);
  if (status == GL_FRAMEBUFFER_COMPLETE && samples > 1) {
    // Multisampled pixels cannot be read directly: readPixels resolves into this one first.
    glCreateFramebuffers(1, &resolveFbo_);
    glCreateRenderbuffers(1, &resolveRb_);
    glNamedRenderbufferStorage(resolveRb_, GL_RGBA8, width, height);
    glNamedFramebufferRenderbuffer(resolveFbo_, GL_COLOR_ATTACHMENT0, GL_RENDERBUFFER, resolveRb_);
    status = glCheckNamedFramebufferStatus(resolveFbo_, GL_FRAMEBUFFER);
  }
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    deleteFramebuffers();
    std::ostringstream msg;
    msg << "renderer: offscreen framebuffer " << width << "x" << height << " (" << samples
        << " samples) is incomplete (status 0x" << std::hex << status << ")";
    throw std::runtime_error(msg.str());
  }
  fboWidth_ = width;
  fboHeight_ = height;
  samples_ = samples;
}

void Renderer::setWindowTarget() { deleteFramebuffers(); }

void Renderer::draw(const Camera& camera, DrawMode drawMode, ColourMode colourMode, int width,
                    int height, float pointSize, float bodySize, float worldRadius) {
  if (drawMode == DrawMode::Splat) throw std::invalid_argument("renderer: splat frames are drawn by SplatRenderer");
  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  const int x0 = fbo_ ? 0 : viewportX_, y0 = fbo_ ? 0 : viewportY_;
  glViewport(x0, y0, width, height);
  // The window's panel (ImGui) leaves scissor, blend and cull state behind; set all we rely on.
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_STENCIL_TEST);
  glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  glDepthMask(GL_TRUE);
  glClearColor(kBackground[0], kBackground[1], kBackground[2], kBackground[3]);
  glClearDepth(1.0);
  glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);
  if (numBodies_ == 0 || width <= 0 || height <= 0) return;

  const glm::mat4 view = camera.view();
  const glm::mat4 projection = camera.projection(static_cast<float>(width) / static_cast<float>(height));
  const ShaderProgram& program = drawMode == DrawMode::Boids    ? boidsProgram_
                                 : drawMode == DrawMode::Points ? pointsProgram_
                                                                : spritesProgram_;
  program.set("u_view", view);
  program.set("u_projection", projection);
  program.set("u_colourMode", static_cast<int>(colourMode));
  program.set("u_plane", plane_ ? 1 : 0);
  program.set("u_speedScale", speedScale_);
  program.set("u_speedFloor", std::min(speedFloor_, speedScale_));
  program.set("u_pointSize", pointSize);
  program.set("u_viewportHeight", static_cast<float>(height));
  // Depth dimming spans the scene sphere around the target, seen from the eye.
  program.set("u_depthNear", camera.distance() - worldRadius);
  program.set("u_depthRange", worldRadius > 0.0f ? 2.0f * worldRadius : 0.0f);
  program.set("u_fog", fog_);

  switch (drawMode) {
    case DrawMode::Boids:
      program.set("u_eye", camera.eye());
      program.set("u_bodySize", bodySize);
      glEnable(GL_DEPTH_TEST);
      glDepthFunc(GL_LESS);
      glDisable(GL_BLEND);
      break;
    case DrawMode::Points:
      program.set("u_spriteSize", 0.0f);
      glEnable(GL_DEPTH_TEST);
      glDepthFunc(GL_LESS);
      glDisable(GL_BLEND);
      glEnable(GL_PROGRAM_POINT_SIZE);
      break;
    case DrawMode::Sprites:
      program.set("u_spriteSize", bodySize);
      program.set("u_spriteAlpha", spriteAlpha_);
      // Additive light is order-independent, so no depth test and no sorting: the sprites of a
      // dense core add up to a glow, as stars do.
      glDisable(GL_DEPTH_TEST);
      glDepthMask(GL_FALSE);
      glEnable(GL_BLEND);
      glBlendEquation(GL_FUNC_ADD);
      glBlendFunc(GL_SRC_ALPHA, GL_ONE);
      glEnable(GL_PROGRAM_POINT_SIZE);
      break;
    case DrawMode::Splat:
      break;
  }

  program.use();
  glBindVertexArray(vao_);
  glDrawArrays(GL_POINTS, 0, static_cast<GLsizei>(numBodies_));
  glBindVertexArray(0);
  glUseProgram(0);

  glDisable(GL_BLEND);
  glDepthMask(GL_TRUE);
  glDisable(GL_PROGRAM_POINT_SIZE);
}

std::vector<uint8_t> Renderer::readPixels(int width, int height) {
  if (width <= 0 || height <= 0) return {};
  if (fbo_ && (width > fboWidth_ || height > fboHeight_)) {
    throw std::invalid_argument("renderer: readPixels " + std::to_string(width) + "x" +
                                std::to_string(height) + " exceeds the offscreen target " +
                                std::to_string(fboWidth_) + "x" + std::to_string(fboHeight_));
  }
  GLuint readFbo = fbo_;
  if (resolveFbo_) {
    glBlitNamedFramebuffer(fbo_, resolveFbo_, 0, 0, width, height, 0, 0, width, height,
                           GL_COLOR_BUFFER_BIT, GL_NEAREST);
    readFbo = resolveFbo_;
  }
  glBindFramebuffer(GL_READ_FRAMEBUFFER, readFbo);
  if (readFbo == 0) {
    glReadBuffer(GL_BACK);
  } else {
    glNamedFramebufferReadBuffer(readFbo, GL_COLOR_ATTACHMENT0);
  }
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  glPixelStorei(GL_PACK_ALIGNMENT, 1);
  glPixelStorei(GL_PACK_ROW_LENGTH, 0);

  const size_t rowBytes = static_cast<size_t>(width) * 4;
  std::vector<uint8_t> pixels(rowBytes * static_cast<size_t>(height));
  glReadPixels(readFbo == 0 ? viewportX_ : 0, readFbo == 0 ? viewportY_ : 0, width, height, GL_RGBA,
               GL_UNSIGNED_BYTE, pixels.data());
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);

  // GL's first row is the bottom one; image files and video frames start at the top.
  std::vector<uint8_t> row(rowBytes);
  for (int y = 0; y < height / 2; ++y) {
    uint8_t* a = pixels.data() + static_cast<size_t>(y) * rowBytes;
    uint8_t* b = pixels.data() + static_cast<size_t>(height - 1 - y) * rowBytes;
    std::memcpy(row.data(), a, rowBytes);
    std::memcpy(a, b, rowBytes);
    std::memcpy(b, row.data(), rowBytes);
  }
  return pixels;
}

}  // namespace murmur::render
