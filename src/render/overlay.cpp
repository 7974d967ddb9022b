// Renderer::drawOverlay: what goes over a frame in every draw mode, the world's box.
#include <glad/gl.h>

#include <algorithm>
#include <cmath>

#include "render/renderer.h"

namespace murmur::render {
namespace {

constexpr int kFloatsPerVertex = 7;  // xyz, rgba

void pushVertex(std::vector<float>& out, const glm::vec3& p, const glm::vec4& c) {
  out.insert(out.end(), {p.x, p.y, p.z, c.r, c.g, c.b, c.a});
}

// The cube's twelve edges as line vertices, each corner dimmed by its distance from the eye as
// the bodies are (colour.glsl depthCue, with the fog's strength).
void appendBox(std::vector<float>& out, const Camera& camera, const OverlayStyle& style) {
  const float h = style.boxHalfSize;
  const glm::vec3 eye = camera.eye();
  const float nearDistance = camera.distance() - style.worldRadius;
  const float range = 2.0f * style.worldRadius;
  const auto corner = [h](int i) { return glm::vec3(i & 1 ? h : -h, i & 2 ? h : -h, i & 4 ? h : -h); };
  const auto colour = [&](const glm::vec3& p) {
    float cue = 1.0f;
    if (range > 0.0f) {
      const float t = std::clamp((glm::length(p - eye) - nearDistance) / range, 0.0f, 1.0f);
      cue = 1.0f - std::clamp(style.fog, 0.0f, 1.0f) * t;
    }
    return glm::vec4(kBoxColour[0] * cue, kBoxColour[1] * cue, kBoxColour[2] * cue, 1.0f);
  };
  for (int i = 0; i < 8; ++i) {
    for (int bit = 1; bit < 8; bit <<= 1) {
      if (i & bit) continue;
      const glm::vec3 a = corner(i), b = corner(i | bit);
      pushVertex(out, a, colour(a));
      pushVertex(out, b, colour(b));
    }
  }
}

}  // namespace

void Renderer::drawOverlay(const Camera& camera, const OverlayStyle& style, int width, int height) {
  if (width <= 0 || height <= 0) return;
  overlayVertices_.clear();
  if (style.boxHalfSize > 0.0f) appendBox(overlayVertices_, camera, style);
  const size_t boxVertices = overlayVertices_.size() / kFloatsPerVertex;
  if (overlayVertices_.empty()) return;

  if (!overlayVao_) {
    glCreateVertexArrays(1, &overlayVao_);
    glEnableVertexArrayAttrib(overlayVao_, 0);
    glVertexArrayAttribFormat(overlayVao_, 0, 3, GL_FLOAT, GL_FALSE, 0);
    glVertexArrayAttribBinding(overlayVao_, 0, 0);
    glEnableVertexArrayAttrib(overlayVao_, 1);
    glVertexArrayAttribFormat(overlayVao_, 1, 4, GL_FLOAT, GL_FALSE, 3 * sizeof(float));
    glVertexArrayAttribBinding(overlayVao_, 1, 0);
    glCreateBuffers(1, &overlayBuffer_);
  }
  const size_t vertices = overlayVertices_.size() / kFloatsPerVertex;
  if (vertices > overlayCapacity_) {
    overlayCapacity_ = std::max<size_t>(vertices, 1024);
    glNamedBufferData(overlayBuffer_, static_cast<GLsizeiptr>(overlayCapacity_ * kFloatsPerVertex * sizeof(float)),
                      nullptr, GL_STREAM_DRAW);
    glVertexArrayVertexBuffer(overlayVao_, 0, overlayBuffer_, 0, kFloatsPerVertex * sizeof(float));
  }
  glNamedBufferSubData(overlayBuffer_, 0, static_cast<GLsizeiptr>(overlayVertices_.size() * sizeof(float)),
                       overlayVertices_.data());

  glBindFramebuffer(GL_FRAMEBUFFER, fbo_);
  glViewport(drawOriginX(), drawOriginY(), width, height);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_DEPTH_TEST);
  glDepthMask(GL_FALSE);
  glEnable(GL_BLEND);
  glBlendEquation(GL_FUNC_ADD);
  glBindVertexArray(overlayVao_);
  overlayProgram_.use();
  if (boxVertices > 0) {
    overlayProgram_.set("u_view", camera.view());
    overlayProgram_.set("u_projection", camera.projection(static_cast<float>(width) / static_cast<float>(height)));
    glBlendFunc(GL_SRC_ALPHA, GL_ONE);
    glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(boxVertices));
  }
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
  glDepthMask(GL_TRUE);
}

}  // namespace murmur::render
