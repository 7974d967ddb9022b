// The renderer's buffers hold exactly the engine's state after DrawSource::fill, through either
// path, and a frame of that state has bodies on screen.
#include <glad/gl.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "app/draw_source.h"
#include "app/engine_factory.h"
#include "app/view_setup.h"
#include "core/pipeline_table.h"
#include "core/scenarios.h"
#include "render/egl_context.h"
#include "render/renderer.h"

using namespace murmur;

namespace {

struct GlBuffers {
  std::vector<core::Vec4> pos, vel;
  std::vector<uint32_t> id;
};

GlBuffers readBack(const render::Renderer& r) {
  GlBuffers b;
  const size_t n = r.numBodies();
  b.pos.resize(n);
  b.vel.resize(n);
  b.id.resize(n);
  glGetNamedBufferSubData(r.positionBuffer(), 0, GLsizeiptr(n * sizeof(core::Vec4)), b.pos.data());
  glGetNamedBufferSubData(r.velocityBuffer(), 0, GLsizeiptr(n * sizeof(core::Vec4)), b.vel.data());
  glGetNamedBufferSubData(r.idBuffer(), 0, GLsizeiptr(n * sizeof(uint32_t)), b.id.data());
  return b;
}

// The pipelines of the pipeline table that serve boids and run on this engine.
std::vector<core::Pipeline> boidsPipelinesOn(unsigned runsOn) {
  std::vector<core::Pipeline> out;
  for (core::Pipeline p : core::pipelinesFor(core::ForceMode::Boids))
    if (core::pipelineInfo(p).runsOn & runsOn) out.push_back(p);
  return out;
}

// Steps the engine, fills the buffers, and checks them body by body against readBodies (by id).
void checkFill(core::EngineKind kind, core::Pipeline pipe, bool expectInterop, render::EglContext& ctx) {
  core::SimParams p = core::defaultParams();
  p.pipeline = pipe;
  p.halfSize = 30.0f;
  core::ScenarioSpec spec;
  spec.n = 4000;
  core::Bodies bodies = core::makeScenario(spec, p).bodies;
  auto engine = app::makeEngine(kind, p);
  engine->reset(bodies);
  engine->step(3);  // coherent: the engine's order is no longer the id order

  render::Renderer renderer;
  renderer.setOffscreenTarget(160, 120);
  app::DrawSource source(renderer, ctx.isNvidia());
  source.fill(*engine);
  EXPECT_EQ(source.interop(), expectInterop) << source.interopOffReason();
  if (kind == core::EngineKind::Cpu) {
    EXPECT_EQ(source.interopOffReason(), "CPU engine");
  }
  ASSERT_EQ(renderer.numBodies(), bodies.size());

  const core::Bodies state = engine->readBodies();
  const GlBuffers gl = readBack(renderer);
  std::vector<bool> seen(state.size(), false);
  for (size_t k = 0; k < gl.id.size(); ++k) {
    const uint32_t id = gl.id[k];
    ASSERT_LT(id, state.size());
    ASSERT_FALSE(seen[id]) << "id " << id << " twice";
    seen[id] = true;
    ASSERT_EQ(gl.pos[k].x, state.pos[id].x) << "slot " << k;
    ASSERT_EQ(gl.pos[k].z, state.pos[id].z);
    ASSERT_EQ(gl.vel[k].y, state.vel[id].y);
  }

  // And a frame of it has bodies on screen.
  render::Camera cam;
  app::ViewStyle style = app::defaultStyle(p, state, "points", "");
  app::frameScene(cam, state, p, style);
  renderer.draw(cam, style.draw, style.colour, 160, 120, 2.0f, style.bodySize, style.worldRadius);
  const std::vector<uint8_t> px = renderer.readPixels(160, 120);
  int lit = 0;
  for (size_t i = 0; i < px.size(); i += 4) lit += (px[i] + px[i + 1] + px[i + 2]) > 60;
  EXPECT_GT(lit, 200);
}

std::unique_ptr<render::EglContext> context() {
  std::string err;
  auto ctx = render::EglContext::create(&err);
  if (!ctx) std::fprintf(stderr, "no EGL context: %s\n", err.c_str());
  return ctx;
}

}  // namespace

TEST(DrawSource, CpuEngineUploadsTheState) {
  auto ctx = context();
  if (!ctx) GTEST_SKIP() << "no EGL context";
  for (core::Pipeline pipe : boidsPipelinesOn(core::kOnCpu)) checkFill(core::EngineKind::Cpu, pipe, false, *ctx);
}

TEST(DrawSource, CudaEngineWritesTheGlBuffersThroughInterop) {
  std::string why;
  if (!app::cudaAvailable(&why)) GTEST_SKIP() << why;
  auto ctx = context();
  if (!ctx) GTEST_SKIP() << "no EGL context";
  if (!ctx->isNvidia()) GTEST_SKIP() << "GL is " << ctx->vendor() << ", not NVIDIA: no interop";
  for (core::Pipeline pipe : boidsPipelinesOn(core::kOnCuda)) checkFill(core::EngineKind::Cuda, pipe, true, *ctx);
}

namespace {

// The default boids glyph is a fixed share of the mean spacing of the boids, so the default world
// reads the same at 10k and 1M: long enough that a flock shows as arrows, short enough that the
// space between flocks stays dark. (The fixed half-size / 120 of before drew 10k boids of the
// default world at an eighth of the spacing: specks.)
TEST(ViewSetup, BoidGlyphsFollowTheSpacingOfTheBoids) {
  for (size_t n : {size_t(10000), size_t(100000), size_t(1000000)}) {
    core::SimParams p = core::defaultParams();
    p.force = core::ForceMode::Boids;
    p.halfSize = core::denseHalfSize(n, p, 4.0);
    core::Bodies bodies;
    bodies.resize(n);
    const app::ViewStyle style = app::defaultStyle(p, bodies, "boids", "");
    const float spacing = 2.0f * p.halfSize / std::cbrt(float(n));
    EXPECT_GE(style.bodySize, 0.3f * spacing) << n;
    EXPECT_LE(style.bodySize, 0.5f * spacing) << n;
  }
}

}  // namespace
