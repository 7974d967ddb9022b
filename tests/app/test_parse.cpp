#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "app/async_stepper.h"
#include "app/options.h"
#include "app/params_json.h"
#include "app/parse.h"
#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/metrics.h"
#include "core/scenarios.h"

using namespace murmur;
using core::UsageError;

namespace {
std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(Parse, CountsWithSuffixes) {
  EXPECT_EQ(app::parseCount("--n", "262144", 1, 1u << 30), 262144u);
  EXPECT_EQ(app::parseCount("--n", "25k", 1, 1u << 30), 25000u);
  EXPECT_EQ(app::parseCount("--n", "1M", 1, 1u << 30), 1000000u);
  for (const char* bad : {"", "-5", "0", "1.5", "abc", "10x", "1m5", "99999999999999", "2000M", " 5"}) {
    const std::string e = errorOf([&] { app::parseCount("--n", bad, 1, 1u << 30); });
    EXPECT_NE(e.find("--n"), std::string::npos) << bad;
    EXPECT_NE(e.find("1073741824"), std::string::npos) << "names the allowed range: " << e;
  }
}

TEST(Parse, BlockSizes) {
  // The block size is parsed by its row of the parameter table, like every parameter.
  const core::ParamDesc& d = *core::findParam("blockSize");
  const auto parseBlockSize = [&](const char* text) { return app::parseOption(d.option, text, d.label, d.spec); };
  EXPECT_EQ(parseBlockSize("32"), 32);
  EXPECT_EQ(parseBlockSize("1024"), 1024);
  for (const char* bad : {"0", "16", "48", "1056", "2048", "-32", "abc", "256.0"})
    EXPECT_NE(errorOf([&] { parseBlockSize(bad); }).find("multiple of 32"), std::string::npos) << bad;
}

TEST(Parse, FloatsAndNamesAndLists) {
  EXPECT_FLOAT_EQ(app::parseFloat("--dt", "0.25", true), 0.25f);
  for (const char* bad : {"0", "-1", "nan", "inf", "1e40", "x", "", "0.1.2", " 0.1", "0x1p-3", "1e-46", "1e-39"})
    EXPECT_NE(errorOf([&] { app::parseFloat("--dt", bad, true); }).find("--dt"), std::string::npos) << bad;
  EXPECT_EQ(app::parseName("--pipeline", "naive", {"naive", "coherent"}), "naive");
  EXPECT_NE(errorOf([&] { app::parseName("--pipeline", "fast", {"naive", "coherent"}); }).find("naive, coherent"),
            std::string::npos);
  EXPECT_EQ(app::splitList("--n", "1k,2k,3M").size(), 3u);
  EXPECT_FALSE(errorOf([&] { app::splitList("--n", "1k,,2k"); }).empty());
  EXPECT_FALSE(errorOf([&] { app::splitList("--n", "1k,"); }).empty());
}

// Every parameter's option past its bound is refused as it is parsed, in one line that names the
// option, the value and what is allowed (--alignment-scale 1e30 used to run, the flock standing
// still); the bound itself is taken.
TEST(Parse, ParameterOptionsPastTheirBoundAreRefused) {
  const auto errorOfArgs = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"murmur", "--headless", "--no-render", "--engine", "cpu"});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    app::Options o;
    return errorOf([&] { app::parseOptions(static_cast<int>(argv.size()), argv.data(), o); });
  };
  for (const core::ParamDesc& d : core::paramTable()) {
    if (d.spec.type == core::ValueType::Enum) continue;
    const std::string over = core::formatValue(d, 10 * d.spec.hi + 1);
    const std::string e = errorOfArgs({d.option, over});
    EXPECT_EQ(e, core::invalidValueMessage(d.option, over, d.label, d.spec)) << d.option;
    EXPECT_NE(e.find(core::allowedText(d.spec)), std::string::npos) << e;
    EXPECT_EQ(app::parseOption(d.option, core::formatValue(d, d.spec.hi), d.label, d.spec), d.spec.hi) << d.option;
  }
  EXPECT_EQ(errorOfArgs({"--alignment-scale", "1e30"}),
            "--alignment-scale 1e30 is invalid: alignment s3 must be a finite number >= 0 and at most 1");
  EXPECT_EQ(errorOfArgs({"--alignment-scale", "1", "--cohesion-scale", "1", "--separation-scale", "1"}), "");
}

TEST(ParamsJson, RoundTripAndErrors) {
  core::SimParams p = core::defaultParams();
  p.boids.cohesionRadius = 7.5f;
  p.gravity.integrator = core::Integrator::DampedEuler;
  p.blockSize = 512;
  const std::string path = ::testing::TempDir() + "murmur_params.json";
  { std::ofstream(path) << app::paramsToJson(p); }
  core::SimParams q = core::defaultParams();
  app::loadParamsFile(path, q);
  EXPECT_FLOAT_EQ(q.boids.cohesionRadius, 7.5f);
  EXPECT_EQ(q.gravity.integrator, core::Integrator::DampedEuler);
  EXPECT_EQ(q.blockSize, 512);

  auto loadText = [&](const std::string& text) {
    { std::ofstream(path) << text; }
    core::SimParams r = core::defaultParams();
    return errorOf([&] { app::loadParamsFile(path, r); });
  };
  EXPECT_NE(loadText("{\"boids\": {\"radius\": 3}}").find("unknown key 'radius'"), std::string::npos);
  EXPECT_NE(loadText("{\"blockSize\": 100}").find("block size"), std::string::npos);
  EXPECT_NE(loadText("{\"blockSize\": \"big\"}").find("integer"), std::string::npos);
  EXPECT_NE(loadText("{\"force\": \"magnetism\"}").find("force"), std::string::npos);
  EXPECT_NE(loadText("{not json").find("not valid JSON"), std::string::npos);
  // A file's value past the row's bound, as the option's.
  EXPECT_NE(loadText("{\"boids\": {\"alignmentScale\": 1e30}}")
                .find("boids.alignmentScale = 1e+30 is invalid: alignment s3 must be a finite number >= 0 "
                      "and at most 1"),
            std::string::npos);
  // A key given twice in one object: the parser would keep one silently.
  EXPECT_NE(loadText("{\"boids\": {\"maxSpeed\": 2, \"maxSpeed\": 3}}").find("boids.maxSpeed is given twice"),
            std::string::npos);
  EXPECT_NE(loadText("{\"blockSize\": 64, \"blockSize\": 64}").find("blockSize is given twice"), std::string::npos);
  // The same key in two objects is two keys.
  EXPECT_EQ(loadText("{\"boids\": {\"dt\": 0.1}, \"gravity\": {\"dt\": 0.1}}"), "");
  {
    { std::ofstream(path) << "{\"force\": \"gravity\"}"; }
    core::SimParams r = core::defaultParams();
    std::set<std::string> keys;
    app::loadParamsFile(path, r, &keys);
    EXPECT_EQ(keys, (std::set<std::string>{"force"}));
    { std::ofstream(path) << "{\"blockSize\": 64, \"boids\": {\"dt\": 0.1}}"; }
    keys.clear();
    app::loadParamsFile(path, r, &keys);
    EXPECT_EQ(keys, (std::set<std::string>{"blockSize", "boids"}));  // the top level only
  }
  EXPECT_NE(errorOf([&] {
              core::SimParams r;
              app::loadParamsFile("/nonexistent/p.json", r);
            }).find("cannot open"),
            std::string::npos);
}

// The window's worker: a step started on it gives exactly the state of a step taken directly, and
// the caller sees it finish once.
TEST(AsyncStepper, StepsOnTheWorkerLikeADirectStep) {
  core::SimParams p = core::defaultParams();
  core::ScenarioSpec spec;
  spec.n = 3000;
  const core::Bodies start = core::makeScenario(spec, p).bodies;
  auto direct = core::createCpuEngine(p);
  auto viaWorker = core::createCpuEngine(p);
  direct->reset(start);
  viaWorker->reset(start);
  app::AsyncStepper stepper;
  for (int i = 0; i < 3; ++i) {
    direct->step(1);
    stepper.start(*viaWorker);
    stepper.wait();
    EXPECT_FALSE(stepper.busy());
    app::TimedStep done;
    done.ms = -1;
    ASSERT_TRUE(stepper.poll(&done));
    EXPECT_GE(done.ms, 0.0);
    EXPECT_FALSE(stepper.poll(&done)) << "a finished step is reported once";
  }
  EXPECT_EQ(core::stateChecksum(direct->readBodies()), core::stateChecksum(viaWorker->readBodies()));
}
