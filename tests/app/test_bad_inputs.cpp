// Every bad input the hostile-user pass found accepted silently or answered in the wrong words:
// each must exit 2 with one line that names the option the user typed. One row per input, run
// through the real executable.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "run_command.h"

using namespace murmur;
namespace fs = std::filesystem;

namespace {
struct Case {
  std::string args;     // after "murmur"
  std::string mention;  // the option the one line must start with
};

class BadInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) / ("murmur_bad_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    put("wrap_grid.json", R"({"gravity": {"gridDim": 4294967297}})");
    put("wrap_block.json", R"({"blockSize": 4294967552})");
    put("junk.json", "{\"blockSize\": 128} trailing junk\n");
    put("huge_scale.json", R"({"boids": {"alignmentScale": 1e30}})");
    put("bodies.txt", "1 0 0 0 0 0 0\n1 1 0 0 0 0 0\n");
    put("other.csv", "a,b,c\n1,2,3\n");
    fs::create_directories(dir_ / "params_dir");
    ::mkfifo((dir_ / "fifo").c_str(), 0600);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void put(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

const std::string kHeadless = "--headless --no-render --engine cpu --n 50 --steps 1 ";
}  // namespace

// One function on purpose: it is a table of (command line, option named) cases and one loop that
// runs them, so that a new refusal is one more line of the table.
TEST_F(BadInputs, EachExitsTwoWithOneLineNamingTheOption) {
  const std::string fileRun = "--headless --no-render --engine cpu --steps 1 --scenario file:" + path("bodies.txt") + " ";
  const std::vector<Case> cases = {
      // An empty value is not the default.
      {"--headless --no-render --engine ''", "--engine"},
      {kHeadless + "--force ''", "--force"},
      {kHeadless + "--pipeline ''", "--pipeline"},
      {"--headless --no-render --engine cpu --steps 1 --n ''", "--n"},
      {kHeadless + "--steps ''", "--steps"},
      {kHeadless + "--dt ''", "--dt"},
      {kHeadless + "--block-size ''", "--block-size"},
      {kHeadless + "--scenario ''", "--scenario"},
      {kHeadless + "--seed ''", "--seed"},
      {kHeadless + "--rules ''", "--rules"},
      {kHeadless + "--rule ''", "--rule"},
      {kHeadless + "--integrator ''", "--integrator"},
      {kHeadless + "--draw ''", "--draw"},
      {kHeadless + "--colour ''", "--colour"},
      {kHeadless + "--out ''", "--out"},
      {kHeadless + "--csv ''", "--csv"},
      {"bench --engine cpu --preset ''", "--preset"},
      {"--headless --no-render --engine cpu --steps 1 --n=", "--n"},
      // Integers in --params do not wrap.
      {kHeadless + "--params " + path("wrap_grid.json"), "--params"},
      {kHeadless + "--params " + path("wrap_block.json"), "--params"},
      {kHeadless + "--params " + path("junk.json"), "--params"},
      {kHeadless + "--params " + path("params_dir"), "--params"},
      // Numbers: one syntax for every option, nothing rounded to zero.
      {kHeadless + "--dt 1e-46", "--dt"},
      {kHeadless + "--dt 0x1p-3", "--dt"},
      {kHeadless + "--dt ' 0.1'", "--dt"},
      {"--headless --no-render --engine cpu --steps 1 --n 0x10", "--n"},
      {"--headless --no-render --engine cpu --steps 1 --n ' 10'", "--n"},
      {kHeadless + "--steps ' 3'", "--steps"},
      // Messages in the user's option names, not the parameter struct's.
      {kHeadless + "--softening 1e-20", "--softening"},
      {kHeadless + "--half-size 4.9", "--half-size"},
      // A boid faster than the world per step would leave it through the wrap.
      {kHeadless + "--max-speed 1e30", "--max-speed"},
      {kHeadless + "--scenario uniform --half-size 6 --boids-dt 6", "--max-speed"},
      // Past a parameter's bound a step's change of velocity is no longer finite or meaningful
      // (--alignment-scale 1e30 ran, the flock at a standstill): refused by the option's name.
      {kHeadless + "--alignment-scale 1e30", "--alignment-scale 1e30 is invalid"},
      {kHeadless + "--cohesion-scale 1e30", "--cohesion-scale 1e30 is invalid"},
      {kHeadless + "--separation-scale 1e30", "--separation-scale 1e30 is invalid"},
      {kHeadless + "--cohesion-radius 1e30", "--cohesion-radius 1e30 is invalid"},
      {kHeadless + "--separation-radius 1e30", "--separation-radius 1e30 is invalid"},
      {kHeadless + "--alignment-radius 1e30", "--alignment-radius 1e30 is invalid"},
      {kHeadless + "--boids-dt 1e30", "--boids-dt 1e30 is invalid"},
      {kHeadless + "--half-size 1e30", "--half-size 1e30 is invalid"},
      {kHeadless + "--force gravity --scenario plummer --G 1e30", "--G 1e30 is invalid"},
      {kHeadless + "--force gravity --scenario plummer --softening 1e30", "--softening 1e30 is invalid"},
      {kHeadless + "--force gravity --scenario plummer --gravity-dt 1e30", "--gravity-dt 1e30 is invalid"},
      {kHeadless + "--force gravity --scenario plummer --pipeline coherent --grid-spread 1e30",
       "--grid-spread 1e30 is invalid"},
      {kHeadless + "--params " + path("huge_scale.json"), "--params"},
      // Two outputs into one file: one would silently overwrite the other.
      {kHeadless + "--out " + path("same.txt") + " --csv " + path("same.txt"), "--csv"},
      {kHeadless + "--out " + path("same.txt") + " --csv " + path(".") + "/./same.txt", "--csv"},
      // Options the run would ignore: the other force's, another pipeline's, drawing without
      // rendering, the cuda engine's on the CPU, headless outputs in a sweep.
      {kHeadless + "--force gravity --cohesion-radius 3", "--cohesion-radius"},
      {kHeadless + "--force boids --softening 0.3", "--softening"},
      {kHeadless + "--force gravity --pipeline naive --theta 0.3", "--theta"},
      {kHeadless + "--force gravity --pipeline tree --grid-dim 8", "--grid-dim"},
      {kHeadless + "--force gravity --pipeline naive --damping 0.1", "--damping"},
      {kHeadless + "--force boids --pipeline naive --cell-width 2", "--cell-width"},
      {kHeadless + "--block-size 64", "--block-size"},
      {kHeadless + "--width 640", "--width"},
      {kHeadless + "--colour speed", "--colour"},
      {"bench --engine cpu --n 100 --warmup 1 --steps 2 --out " + path("b.txt"), "--out"},
      {"bench --engine cpu --n 100 --warmup 1 --steps 2 --frames 3", "--frames"},
      {"bench --engine cpu --n 100 --warmup 1 --steps 2 --width 640", "--width"},
      // A sweep's options that no row would use.
      {"bench --engine cpu --n 100 --force boids --theta 0.4", "--theta"},
      {"bench --engine cpu --n 100 --force gravity --pipeline naive --theta 0.4", "--theta"},
      {"bench --engine cpu --n 100 --block-size 64", "--block-size"},
      {"bench --engine cpu --n 100 --cpu-baseline", "--cpu-baseline"},
      {"bench --engine cpu --n 100 --reference", "--reference"},
      // Rows appended under another file's header would be read as the wrong columns.
      {"bench --engine cpu --n 100 --warmup 1 --steps 1 --append --csv " + path("other.csv"), "--csv"},
      // murmur accuracy measures gravity on one state: run and boids options do not apply.
      {"accuracy --engine cpu --n 100 --drift-n 0 --pipeline tree", "--pipeline"},
      {"accuracy --engine cpu --n 100 --drift-n 0 --force boids", "--force"},
      {"accuracy --engine cpu --n 100 --drift-n 0 --cohesion-radius 3", "--cohesion-radius"},
      {"accuracy --engine cpu --n 100 --drift-n 0 --integrator euler", "--integrator"},
      // An option given twice.
      {kHeadless + "--n 200", "--n is given more than once"},
      {"bench --engine cpu --n 100 --pipeline naive --pipeline rows", "--pipeline is given more than once"},
      // Outputs that would come out as something else, or fail after the run.
      {"--headless --engine cpu --n 50 --steps 1 --screenshot " + path("shot.jpg"), "--screenshot"},
      {"--headless --engine cpu --n 50 --steps 1 --record " + path("video.txt"), "--record"},
      {"--headless --engine cpu --n 50 --steps 1 --record " + path("video"), "--record"},
      // Options that do not apply are refused, not ignored.
      // A file's bodies: --n and --select within them, the file options only with a file.
      {"--headless --no-render --engine cpu --steps 1 --n 5 --scenario file:" + path("bodies.txt"), "--n"},
      {fileRun + "--select 0-2", "--select"},
      {fileRun + "--select 1-0", "--select"},
      {fileRun + "--select 1,0", "--select"},
      {fileRun + "--select 0-x", "--select"},
      {fileRun + "--select ''", "--select"},
      {fileRun + "--scale-mass 0", "--scale-mass"},
      {fileRun + "--scale-length -2", "--scale-length"},
      {fileRun + "--scale-velocity 1e39", "--scale-velocity"},
      {kHeadless + "--select 0-9", "--select"},
      {kHeadless + "--scale-length 2", "--scale-length"},
      {"bench --engine cpu --scenario file:" + path("bodies.txt") + " --select 0", "--select"},
      {"bench --engine cpu --scenario file:" + path("bodies.txt") + " --n 1", "--n"},
      {"accuracy --engine cpu --n 500 --steps 7", "--steps"},
      // Outputs and inputs that cannot work.
      {kHeadless + "--csv /nonexistent-murmur-dir/t.csv", "--csv"},
      {"bench --engine cpu --n 100 --csv /nonexistent-murmur-dir/b.csv", "--csv"},
      {kHeadless + "--scenario file:" + path("fifo"), "--scenario"},
  };
  for (const Case& c : cases) {
    // timeout: a FIFO or a forgotten check must fail the test, not hang it.
    const test::Result r = test::runCommand("timeout 60 " + test::murmurExe() + " " + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    // The line leads with the option as the user typed it, not an internal name.
    EXPECT_EQ(r.out.rfind("murmur: " + c.mention, 0), 0u) << c.args << "\n" << r.out;
    EXPECT_EQ(test::lineCount(r.out), 1) << c.args << "\n" << r.out;
  }
}

// The same options where they apply run.
TEST_F(BadInputs, OptionsThatApplyAreTaken) {
  const std::string exe = test::murmurExe() + " ";
  for (const std::string& args : {
           kHeadless + "--force gravity --scenario plummer --pipeline tree --theta 0.3 --tree-leaf-size 8",
           kHeadless + "--force gravity --scenario plummer --pipeline coherent --grid-dim 8 --softening 0.3",
           kHeadless + "--force gravity --scenario plummer --pipeline naive --integrator euler --damping 0.1",
           kHeadless + "--force boids --pipeline coherent --cell-width 2 --cohesion-radius 3",
           std::string("accuracy --engine cpu --n 100 --drift-n 0 --force gravity --theta 0.3 --gravity-dt 0.01"),
           "bench --engine cpu --n 100 --warmup 1 --steps 1 --force gravity,boids --theta 0.4 --cohesion-radius 4 "
           "--csv " + path("sweep.csv"),
       }) {
    const test::Result r = test::runCommand("timeout 60 " + exe + args);
    EXPECT_EQ(r.status, 0) << args << "\n" << r.out;
  }
}

// A --params file's force is the run's force, over the scenario's own (dense is boids).
TEST_F(BadInputs, ParamsFileForceIsTaken) {
  put("gravity.json", R"({"force": "gravity"})");
  const test::Result r = test::runCommand("timeout 60 " + test::murmurExe() + " " + kHeadless + "--params " +
                                          path("gravity.json"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("force=gravity"), std::string::npos) << r.out;
}

TEST_F(BadInputs, ByteOrderMarkedFilesLoad) {
  put("bom.txt", "\xEF\xBB\xBF" "1 0 0 0 0 0 0\n1 1 0 0 0 0 0\n");
  put("bom.json", "\xEF\xBB\xBF" R"({"pipeline": "scattered"})");
  const test::Result r = test::runCommand(test::murmurExe() +
                                          " --headless --no-render --engine cpu --steps 1 --scenario file:" +
                                          path("bom.txt") + " --params " + path("bom.json"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("n=2 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("pipeline=scattered"), std::string::npos) << r.out;
}
