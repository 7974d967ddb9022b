// Renderer::drawOverlay: what goes over a frame in every draw mode, the world's box and the
// colour legend (lettered with a 3x5 pixel font, so headless frames need no text library).
#include <glad/gl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include <glm/gtc/matrix_transform.hpp>

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
  const float h = style.boxHalfSize, hz = style.boxHalfDepth >= 0.0f ? style.boxHalfDepth : h;
  const glm::vec3 eye = camera.eye();
  const float nearDistance = camera.distance() - style.worldRadius;
  const float range = 2.0f * style.worldRadius;
  const auto corner = [h, hz](int i) { return glm::vec3(i & 1 ? h : -h, i & 2 ? h : -h, i & 4 ? hz : -hz); };
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

// Rows of a 3x5 glyph, top first, three bits each (4 = left column); 0 for a space or a
// character the legend never writes.
std::array<uint8_t, 5> glyphRows(char c) {
  switch (c) {
    case '0': return {7, 5, 5, 5, 7};
    case '1': return {2, 6, 2, 2, 7};
    case '2': return {7, 1, 7, 4, 7};
    case '3': return {7, 1, 7, 1, 7};
    case '4': return {5, 5, 7, 1, 1};
    case '5': return {7, 4, 7, 1, 7};
    case '6': return {7, 4, 7, 5, 7};
    case '7': return {7, 1, 1, 1, 1};
    case '8': return {7, 5, 7, 5, 7};
    case '9': return {7, 5, 7, 1, 7};
    case '.': return {0, 0, 0, 0, 2};
    case '-': return {0, 0, 7, 0, 0};
    case '+': return {0, 2, 7, 2, 0};
    case 'A': return {2, 5, 7, 5, 5};
    case 'B': return {6, 5, 6, 5, 6};
    case 'D': return {6, 5, 5, 5, 6};
    case 'E': return {7, 4, 6, 4, 7};
    case 'G': return {3, 4, 5, 5, 3};
    case 'H': return {5, 5, 7, 5, 5};
    case 'I': return {7, 2, 2, 2, 7};
    case 'N': return {6, 5, 5, 5, 5};
    case 'O': return {2, 5, 5, 5, 2};
    case 'P': return {6, 5, 6, 4, 4};
    case 'S': return {3, 4, 2, 1, 6};
    case 'Y': return {5, 5, 2, 2, 2};
    default: return {0, 0, 0, 0, 0};
  }
}

// Two triangles over the pixel rect (x0, y0)-(x1, y1).
void pushQuad(std::vector<float>& out, float x0, float y0, float x1, float y1, const glm::vec4& c) {
  for (const glm::vec2 p : {glm::vec2(x0, y0), glm::vec2(x1, y0), glm::vec2(x1, y1), glm::vec2(x0, y0),
                            glm::vec2(x1, y1), glm::vec2(x0, y1)})
    pushVertex(out, glm::vec3(p, 0.0f), c);
}

// The lettering: `dot` pixels per font pixel, 4 font pixels per character.
constexpr float kTextColour[4] = {0.80f, 0.82f, 0.88f, 1.0f};
float textWidth(const std::string& s, float dot) { return s.empty() ? 0.0f : (4.0f * float(s.size()) - 1.0f) * dot; }

void pushText(std::vector<float>& out, const std::string& s, float x, float y, float dot) {
  const glm::vec4 c(kTextColour[0], kTextColour[1], kTextColour[2], kTextColour[3]);
  for (size_t i = 0; i < s.size(); ++i) {
    const auto rows = glyphRows(static_cast<char>(std::toupper(static_cast<unsigned char>(s[i]))));
    for (int r = 0; r < 5; ++r)
      for (int col = 0; col < 3; ++col)
        if (rows[r] & (4 >> col)) {
          const float px = x + (4.0f * float(i) + float(col)) * dot, py = y + float(4 - r) * dot;
          pushQuad(out, px, py, px + dot, py + dot, c);
        }
  }
}

std::string speedText(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", double(v));
  return buf;
}

// The legend's parts in pixels from the drawn area's bottom-left corner: the swatch, the backing
// behind it all, and the lines of text (the name above the swatch; the speed ramp's ends below).
struct LegendLayout {
  glm::vec4 swatch, backing;
  float dot;
  std::string name, low, high;
  glm::vec2 nameAt, lowAt, highAt;
};

LegendLayout legendLayout(ColourMode colour, float speedFloor, float speedScale, int width, int height) {
  LegendLayout l;
  const float s = std::max(1.0f, std::floor(float(height) / 720.0f));
  l.dot = 2.0f * s;
  const float margin = 12.0f * s, pad = 6.0f * s, gap = 4.0f * s, line = 5.0f * l.dot;
  const float right = float(width) - margin;
  float y = margin + pad;  // bottom of the next part, going up
  float swatchW, swatchH;
  if (colour == ColourMode::Velocity) {
    l.name = "HEADING";
    swatchW = swatchH = 56.0f * s;
  } else {
    l.name = colour == ColourMode::Speed ? "SPEED" : "BODY ID";
    swatchW = 128.0f * s;
    swatchH = 10.0f * s;
  }
  const float contentW = std::max(swatchW, textWidth(l.name, l.dot));
  const float left = right - pad - contentW;
  if (colour == ColourMode::Speed) {
    l.low = speedText(std::min(speedFloor, speedScale));
    l.high = speedText(speedScale);
    l.lowAt = {left, y};
    l.highAt = {left + swatchW - textWidth(l.high, l.dot), y};
    y += line + gap;
  }
  l.swatch = {left + 0.5f * (contentW - swatchW), y, left + 0.5f * (contentW + swatchW), y + swatchH};
  y += swatchH + gap;
  l.nameAt = {left + 0.5f * (contentW - textWidth(l.name, l.dot)), y};
  y += line + pad;
  l.backing = {left - pad, margin, right, y};
  return l;
}

constexpr int kIdSwatches = 12;

}  // namespace

glm::vec4 legendSwatch(ColourMode colour, int width, int height) {
  return legendLayout(colour, 0.0f, 1.0f, width, height).swatch;
}

void Renderer::drawOverlay(const Camera& camera, const OverlayStyle& style, int width, int height) {
  if (width <= 0 || height <= 0) return;
  overlayVertices_.clear();
  if (style.boxHalfSize > 0.0f) appendBox(overlayVertices_, camera, style);
  const size_t boxVertices = overlayVertices_.size() / kFloatsPerVertex;
  LegendLayout legend;
  if (style.legend) {
    legend = legendLayout(style.colour, style.speedFloor, style.speedScale, width, height);
    const glm::vec4& b = legend.backing;
    pushQuad(overlayVertices_, b.x, b.y, b.z, b.w, glm::vec4(0.0f, 0.0f, 0.0f, 0.6f));
    pushText(overlayVertices_, legend.name, legend.nameAt.x, legend.nameAt.y, legend.dot);
    pushText(overlayVertices_, legend.low, legend.lowAt.x, legend.lowAt.y, legend.dot);
    pushText(overlayVertices_, legend.high, legend.highAt.x, legend.highAt.y, legend.dot);
  }
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
    // Colour only: the target's alpha stays opaque (screenshots keep every pixel's alpha at 1).
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE, GL_ZERO, GL_ONE);
    glDrawArrays(GL_LINES, 0, static_cast<GLsizei>(boxVertices));
  }
  if (style.legend) {
    // Pixels of the drawn area, origin at its bottom-left corner.
    const glm::mat4 pixels = glm::ortho(0.0f, float(width), 0.0f, float(height));
    overlayProgram_.set("u_view", glm::mat4(1.0f));
    overlayProgram_.set("u_projection", pixels);
    glBlendFuncSeparate(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA, GL_ZERO, GL_ONE);
    glDrawArrays(GL_TRIANGLES, static_cast<GLint>(boxVertices), static_cast<GLsizei>(vertices - boxVertices));
    legendProgram_.set("u_projection", pixels);
    legendProgram_.set("u_viewToWorld", glm::mat4(glm::transpose(glm::mat3(camera.view()))));
    legendProgram_.set("u_colourMode", static_cast<int>(style.colour));
    legendProgram_.set("u_plane", style.plane ? 1 : 0);
    legendProgram_.set("u_speedScale", style.speedScale);
    legendProgram_.set("u_speedFloor", std::min(style.speedFloor, style.speedScale));
    legendProgram_.set("u_idSwatches", kIdSwatches);
    const glm::vec4& r = legend.swatch;
    glProgramUniform4f(legendProgram_.id(), legendProgram_.location("u_rect"), r.x, r.y, r.z, r.w);
    legendProgram_.use();
    glDisable(GL_BLEND);
    glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  }
  glBindVertexArray(0);
  glUseProgram(0);
  glDisable(GL_BLEND);
  glDepthMask(GL_TRUE);
}

}  // namespace murmur::render
