#include <gtest/gtest.h>

#include "core/params.h"
#include "core/physics.h"
#include "core/pipeline_table.h"
#include "core/row_search.h"
#include "core/scenarios.h"

using namespace murmur::core;

TEST(Params, DefaultsMatchDesignAndAreValid) {
  const SimParams p = defaultParams();
  EXPECT_EQ(validateParams(p), "");
  EXPECT_FLOAT_EQ(p.boids.cohesionRadius, 5.0f);
  EXPECT_FLOAT_EQ(p.boids.separationRadius, 3.0f);
  EXPECT_FLOAT_EQ(p.boids.alignmentRadius, 5.0f);
  EXPECT_FLOAT_EQ(p.boids.cohesionScale, 0.01f);
  EXPECT_FLOAT_EQ(p.boids.separationScale, 0.1f);
  EXPECT_FLOAT_EQ(p.boids.alignmentScale, 0.1f);
  EXPECT_FLOAT_EQ(p.boids.maxSpeed, 1.0f);
  EXPECT_FLOAT_EQ(p.boids.dt, 0.2f);
  EXPECT_FLOAT_EQ(p.halfSize, 100.0f);
  EXPECT_EQ(p.pipeline, Pipeline::Rows);
  EXPECT_EQ(p.boids.rules, RuleSet::Cis565);
  EXPECT_EQ(p.gravity.integrator, Integrator::Leapfrog);
}

TEST(Params, EachInvalidFieldIsNamed) {
  struct Case {
    void (*mutate)(SimParams&);
    const char* mention;
  };
  const Case cases[] = {
      {[](SimParams& p) { p.boids.cohesionRadius = -1; }, "cohesionRadius"},
      {[](SimParams& p) { p.boids.dt = 0; }, "boids.dt"},
      {[](SimParams& p) { p.gravity.dt = -0.1f; }, "gravity.dt"},
      {[](SimParams& p) { p.gravity.softening = 0; }, "softening"},
      {[](SimParams& p) { p.gravity.damping = 1.5f; }, "damping"},
      {[](SimParams& p) { p.blockSize = 48; }, "block size"},
      {[](SimParams& p) { p.blockSize = 2048; }, "block size"},
      {[](SimParams& p) { p.blockSize = 0; }, "block size"},
      {[](SimParams& p) { p.cellWidthFactor = 3; }, "cell width"},
      {[](SimParams& p) { p.gravity.gridDim = 0; }, "gridDim"},
      {[](SimParams& p) { p.halfSize = 2.0f; }, "radius"},
      {[](SimParams& p) { p.boids.maxSpeed = std::numeric_limits<float>::quiet_NaN(); }, "maxSpeed"},
  };
  for (const Case& c : cases) {
    SimParams p = defaultParams();
    c.mutate(p);
    const std::string err = validateParams(p);
    EXPECT_NE(err.find(c.mention), std::string::npos) << "message: " << err;
  }
}

TEST(Params, BlockSizesAcceptedExactlyOnMultiplesOf32) {
  SimParams p = defaultParams();
  for (int b = 1; b <= 1100; ++b) {
    p.blockSize = b;
    EXPECT_EQ(validateParams(p).empty(), b % 32 == 0 && b <= 1024) << b;
  }
}

TEST(Params, NamesRoundTrip) {
  for (const PipelineInfo& row : pipelineTable()) {
    const Pipeline v = row.id;
    Pipeline out = Pipeline::Naive;
    ASSERT_TRUE(parse(toString(v), out));
    EXPECT_EQ(out, v);
  }
  ForceMode f;
  EXPECT_TRUE(parse("gravity", f));
  EXPECT_EQ(f, ForceMode::Gravity);
  EXPECT_FALSE(parse("Gravity", f));
  EXPECT_FALSE(parse("", f));
  RuleSet r;
  EXPECT_TRUE(parse("reynolds", r));
  EXPECT_EQ(r, RuleSet::Reynolds);
}

// A boid's largest move per step (maxSpeed dt) must stay below the world half-size: the wrap
// (wrapCoord) brings a body back by one world width only.
TEST(Params, BoidsMoveLessThanHalfTheWorldPerStep) {
  SimParams p = defaultParams();
  p.halfSize = 10.0f;
  p.boids.dt = 0.5f;
  p.boids.maxSpeed = 19.5f;  // 9.75 per step
  EXPECT_EQ(validateParams(p), "");
  p.boids.maxSpeed = 20.0f;  // 10: a body at the face would land a whole width away
  const std::string err = validateParams(p);
  EXPECT_EQ(err.rfind("--max-speed 20 ", 0), 0u) << err;
  EXPECT_NE(err.find("half-size 10"), std::string::npos) << err;
  p.boids.maxSpeed = 1.0f;
  p.boids.dt = 10.0f;
  EXPECT_NE(validateParams(p), "");
}

// Below that bound a body leaving through a face lands inside the world, however fast.
TEST(Params, WrapKeepsTheFastestAllowedBoidInTheWorld) {
  const float h = 10.0f;
  for (float x : {-h, -h + 0.001f, 0.0f, h - 0.001f})
    for (float move : {-9.999f, -5.0f, 5.0f, 9.999f}) {
      const float w = wrapCoord(x + move, h);
      EXPECT_GE(w, -h) << x << " " << move;
      EXPECT_LT(w, h) << x << " " << move;
    }
}

