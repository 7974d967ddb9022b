#include "render/splat_renderer.h"

#include <glad/gl.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <stdexcept>

#include <glm/gtc/type_ptr.hpp>

#include "render/renderer.h"

namespace murmur::render {

core::SplatView makeSplatView(const Camera& camera, int width, int height, float worldRadius, const SplatStyle& s) {
  core::SplatView v;
  const float aspect = height > 0 ? static_cast<float>(width) / static_cast<float>(height) : 1.0f;
  const glm::mat4 projection = camera.projection(aspect);
  const glm::mat4 viewProj = projection * camera.view();
  std::memcpy(v.viewProj, glm::value_ptr(viewProj), sizeof v.viewProj);
  v.width = width;
  v.height = height;
  // The camera's own near plane: what GL would clip, the splat culls.
  v.nearDepth = projection[3][2] / (projection[2][2] - 1.0f);
  v.pixelsPerUnit = 0.5f * static_cast<float>(height) * projection[1][1];
  v.bodySize = s.bodySize;
  if (worldRadius > 0.0f && s.fogStrength > 0.0f) {
    // Fog starts at the front of the scene sphere and is full at its back.
    v.fogNear = camera.distance() - worldRadius;
    v.fogRange = 2.0f * worldRadius;
    v.fogStrength = std::min(1.0f, s.fogStrength);
  }
  for (int i = 0; i < 3; ++i) v.background[i] = kBackground[i];
  v.colour = s.colour;
  v.speedScale = s.speedScale;
  v.speedFloor = std::min(s.speedFloor, s.speedScale);
  v.plane = s.plane;
  if (s.slabHalfWidth > 0.0f) {
    // View depth (clip w) of a point is its distance along the view direction; the target sits at
    // camera.distance().
    const float centre = camera.distance() + s.slabOffset;
    v.slabNear = centre - s.slabHalfWidth;
    v.slabFar = centre + s.slabHalfWidth;
    if (v.slabNear < v.nearDepth) v.slabNear = v.nearDepth;
    // Fog across the slab, not the world: otherwise a thin slab gets one flat shade.
    if (v.fogRange > 0.0f) {
      v.fogNear = v.slabNear;
      v.fogRange = v.slabFar - v.slabNear;
    }
  }
  return v;
}

const ProgramDesc& SplatRenderer::program() {
  static const ProgramDesc kProgram = {"splat", {{GL_VERTEX_SHADER, "splat.vert"}, {GL_FRAGMENT_SHADER, "splat.frag"}}};
  return kProgram;
}

SplatRenderer::SplatRenderer(const ShaderSource& shaders) {
  program_ = ShaderProgram::build(program(), shaders);
  // Core profile draws need a vertex array even when the vertices come from gl_VertexID.
  glCreateVertexArrays(1, &vao_);
  resize(1, 1);
}

SplatRenderer::~SplatRenderer() {
  if (keyBuffer_) glDeleteBuffers(1, &keyBuffer_);
  if (vao_) glDeleteVertexArrays(1, &vao_);
}

void SplatRenderer::resize(int width, int height) {
  if (width <= 0 || height <= 0)
    throw std::invalid_argument("splat renderer: frame size " + std::to_string(width) + "x" +
                                std::to_string(height) + " must be positive");
  if (keyBuffer_ && width == width_ && height == height_) return;
  if (keyBuffer_) glDeleteBuffers(1, &keyBuffer_);
  keyBuffer_ = 0;
  const size_t bytes = static_cast<size_t>(width) * static_cast<size_t>(height) * sizeof(uint64_t);
  for (int i = 0; i < 16 && glGetError() != GL_NO_ERROR; ++i) {
  }
  glCreateBuffers(1, &keyBuffer_);
  glNamedBufferStorage(keyBuffer_, static_cast<GLsizeiptr>(bytes), nullptr, GL_DYNAMIC_STORAGE_BIT);
  const GLenum err = glGetError();
  if (err != GL_NO_ERROR) {
    glDeleteBuffers(1, &keyBuffer_);
    keyBuffer_ = 0;
    std::ostringstream msg;
    msg << "splat renderer: cannot allocate the " << width << "x" << height << " key buffer (" << bytes
        << " bytes; GL error 0x" << std::hex << err << ")";
    throw std::runtime_error(msg.str());
  }
  width_ = width;
  height_ = height;
  ++generation_;
}

void SplatRenderer::upload(const std::vector<uint64_t>& keys) {
  const size_t need = static_cast<size_t>(width_) * static_cast<size_t>(height_);
  if (keys.size() != need)
    throw std::invalid_argument("splat renderer: upload of " + std::to_string(keys.size()) + " keys, frame has " +
                                std::to_string(need));
  glNamedBufferSubData(keyBuffer_, 0, static_cast<GLsizeiptr>(need * sizeof(uint64_t)), keys.data());
}

void SplatRenderer::draw(const SplatStyle& style, int originX, int originY) {
  glViewport(originX, originY, width_, height_);
  glDisable(GL_SCISSOR_TEST);
  glDisable(GL_CULL_FACE);
  glDisable(GL_STENCIL_TEST);
  glDisable(GL_BLEND);
  glDisable(GL_DEPTH_TEST);
  glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
  program_.set("u_background", glm::vec3(kBackground[0], kBackground[1], kBackground[2]));
  program_.set("u_edlStrength", style.edlStrength);
  program_.set("u_edlRadius", style.edlRadius);
  glProgramUniform2i(program_.id(), program_.location("u_size"), width_, height_);
  glProgramUniform2i(program_.id(), program_.location("u_origin"), originX, originY);
  // CUDA's writes (unmapped) or the upload are complete before this read: both are ordered ahead
  // of later GL commands.
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, keyBuffer_);
  program_.use();
  glBindVertexArray(vao_);
  glDrawArrays(GL_TRIANGLES, 0, 3);
  glBindVertexArray(0);
  glUseProgram(0);
  glBindBufferBase(GL_SHADER_STORAGE_BUFFER, 0, 0);
}

}  // namespace murmur::render
