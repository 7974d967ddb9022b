// Runs the real murmur executable: every bad input exits 2 with one line naming the problem,
// and good headless runs print their summary line.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "app/engine_factory.h"
#include "app/progress.h"
#include "core/body_io.h"
#include "core/pipeline_table.h"
#include "run_command.h"

using namespace murmur;

namespace {
using test::lineCount;
using test::Result;

Result run(const std::string& args) { return test::runCommand(test::murmurExe() + " " + args); }

const std::string kHeadless = "--headless --no-render --engine cpu ";

// The checksum field of a headless run's summary line ("" when there is none).
std::string sum(const std::string& out) {
  const size_t at = out.find("checksum=");
  return at == std::string::npos ? std::string() : out.substr(at, 25);
}
}  // namespace

TEST(Cli, BadInputExitsTwoWithOneLine) {
  struct Case {
    std::string args, mention;
  };
  const std::string data = test::testDataDir();
  const Case cases[] = {
      {"--n -5", "--n"},
      {"--n 0", "--n"},
      {"--n abc", "--n"},
      {"--n 5000000000", "--n"},
      {"--n 1.5k", "--n"},
      {"--block-size 48", "--block-size"},
      {"--block-size 2048", "--block-size"},
      {"--block-size 0", "--block-size"},
      {"--dt 0", "--dt"},
      {"--dt -0.1", "--dt"},
      {"--dt abc", "--dt"},
      {"--steps -1", "--steps"},
      {"--steps lots", "--steps"},
      {"--force magnetism", "--force"},
      {"--pipeline fast", "--pipeline"},
      {"--engine gpu", "--engine"},
      {"--cell-width 3", "--cell-width"},
      {"--scenario tornado", "--scenario"},
      {"--scenario file:/nonexistent/bodies.txt", "cannot open"},
      {"--scenario file:" + data + "/malformed.txt", "line 2"},
      {"--params /nonexistent/p.json", "--params"},
      {"--seed -3", "--seed"},
      {"--softening 0", "--softening"},
      {"--damping 2", "--damping"},
      {"--grid-dim 0", "--grid-dim"},
      {"--rules boid", "--rules"},
      {"--rule boid", "--rule boid is invalid: rule must be one of: cis565, reynolds"},
      {"--rule reynolds --rules cis565", "--rules cis565 and --rule reynolds set the same parameter"},
      {"--force gravity --rule reynolds", "--rule reynolds applies to boids only"},
      // The shared options set the active rule's parameter; what it lacks is refused, naming it.
      {"--noise 0.3", "--noise 0.3: the cis565 rule has no noise"},
      {"--radius 2", "--radius 2: the cis565 rule has no radius"},
      {"--force gravity --speed 2", "--speed 2: the gravity rule has no speed"},
      {"--speed 2 --max-speed 3", "--speed 2 and --max-speed 3 set the same parameter"},
      {"--speed 0", "--speed 0 is invalid: max speed must be"},
      {"--rule vicsek --noise 7", "--noise 7 is invalid: vicsek noise eta must be"},
      {"--rule vicsek --cohesion-radius 2", "--cohesion-radius 2 applies to the cis565 and reynolds rules only"},
      {"--rule cis565 --vicsek-noise 0.2", "--vicsek-noise 0.2 applies to the vicsek rule only"},
      {"--rule vicsek --scenario uniform --half-size 1.0005", "--boundary periodic needs a world half-size of at least"},
      {"--rule vicsek --scenario uniform --half-size 0.5", "(1; halfSize and vicsek.radius in a --params file)"},
      {"--rule couzin --radius 2", "--radius 2: the couzin rule has no radius"},
      {"--rule couzin --zone-orientation -1", "--zone-orientation -1 is invalid: orientation width dr_o must be"},
      {"--rule couzin --zone-repulsion 0 --zone-orientation 0 --zone-attraction 0", "the zones are all empty"},
      {"--rule couzin --field-of-view 400", "--field-of-view 400 is invalid: field of perception must be"},
      {"--rule cis565 --turn-rate 10", "--turn-rate 10 applies to the couzin rule only"},
      {"--topological 65", "--topological 65 is invalid: topological K must be a whole number from 0 to 64"},
      {"--topological 7 --pipeline naive", "--topological 7 runs on the rows pipeline"},
      {"--topological 7 --radius 2 --topological-radius 3", "set the same parameter (the topological cutoff)"},
      {"--integrator rk4", "--integrator"},
      {"--no-such-option", "no-such-option"},
      {"--zoom 0", "--zoom"},
      {"--width 5", "--width"},
      {"--draw lines", "--draw"},
      {"--fog 1.5", "--fog"},
      {"--slab -4", "--slab"},
      {"--edl strong", "--edl"},
      {"--warp-reduce yes", "--warp-reduce"},
      {"--box maybe", "--box"},
      {"--legend 1", "--legend"},
      {"--checksum maybe", "--checksum"},
      {"--checksum off --out out.txt --n 10 --steps 1", "--checksum off"},
      {"--record-every 0", "--record-every"},
      {"--neighbours 0", "--neighbours"},
      {"--scenario uniform --neighbours 3", "--neighbours"},
      {"--scenario dense --half-size 40", "--half-size"},
      {"--pipeline rows --list-steps 5", "--list-steps"},
      {"--scenario uniform --half-size 30 --list-steps 2", "--list-steps"},
      {"--list-steps 65", "--list-steps"},
      {"--pipeline verlet --scenario dense --n 100 --list-steps 40", "--list-steps"},
      {"--record frames/f%s.png", "--record"},
      {"--record frames/f%05d%05d.png", "--record"},
      {"--steps-per-frame 0", "--steps-per-frame"},
      {"--scenario uniform --n 1000000000", "memory"},
      // Past one engine's bound (2^30): only boids made in shares over several ranks go there.
      {"--scenario dense --n 2000M",
       "--n 2000000000 is out of range: allowed is 1 to 1073741824 (up to 4294967295 for boids over several ranks"},
      {"--out /nonexistent-dir/out.txt --n 10 --steps 1", "--out"},
  };
  for (const Case& c : cases) {
    const Result r = run(kHeadless + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.mention), std::string::npos) << c.args << "\n" << r.out;
    // One line of diagnosis (plus the device line when the engine was created first).
    EXPECT_LE(lineCount(r.out), 2) << c.args << "\n" << r.out;
  }
}

// With no --scenario a run starts in the dense world at 4 neighbours per boid (where flocks form
// apart), on the pipeline fastest there (verlet) unless --pipeline names one; asking for a world
// size instead gives the uniform cube of that size, on the parameters' default pipeline (rows).
TEST(Cli, DefaultWorldIsDenseUnlessAWorldSizeIsGiven) {
  const Result dense = run(kHeadless + "--n 2000 --steps 1");
  EXPECT_EQ(dense.status, 0) << dense.out;
  // Named with its neighbours: the default world is dense:4, --scenario dense alone dense:8.
  EXPECT_NE(dense.out.find("scenario=dense:4 "), std::string::npos) << dense.out;
  EXPECT_NE(dense.out.find("pipeline=verlet"), std::string::npos) << dense.out;
  const Result four = run(kHeadless + "--n 2000 --steps 1 --scenario dense --neighbours 4 --pipeline verlet");
  const auto sum = [](const std::string& s) { return s.substr(s.find("checksum="), 25); };
  EXPECT_EQ(sum(dense.out), sum(four.out));
  const Result rows = run(kHeadless + "--n 2000 --steps 1 --pipeline rows");
  EXPECT_NE(rows.out.find("scenario=dense:4 "), std::string::npos) << rows.out;
  const Result eight = run(kHeadless + "--n 2000 --steps 1 --scenario dense");
  EXPECT_NE(eight.out.find("scenario=dense:8 "), std::string::npos) << eight.out;
  EXPECT_NE(rows.out.find("pipeline=rows"), std::string::npos) << rows.out;
  const Result cube = run(kHeadless + "--n 2000 --steps 1 --half-size 30");
  EXPECT_EQ(cube.status, 0) << cube.out;
  EXPECT_NE(cube.out.find("scenario=uniform"), std::string::npos) << cube.out;
  EXPECT_NE(cube.out.find("pipeline=rows"), std::string::npos) << cube.out;
  // A --params file's halfSize asks for the world size as --half-size does (the default world
  // would size itself from N and drop it): the same cube, the same run.
  const std::string json = ::testing::TempDir() + "cli_half_size.json";
  {
    std::ofstream f(json);
    f << "{\"halfSize\": 30}";
  }
  const Result fromFile = run(kHeadless + "--n 2000 --steps 1 --params " + json);
  EXPECT_EQ(fromFile.status, 0) << fromFile.out;
  EXPECT_NE(fromFile.out.find("scenario=uniform"), std::string::npos) << fromFile.out;
  EXPECT_EQ(sum(fromFile.out), sum(cube.out));
  std::remove(json.c_str());
}

// --checksum off: the run is the same, its summary says checksum=off and nothing gathers the
// final state for it; a sweep and the viewer refuse it.
TEST(Cli, ChecksumOffSkipsTheFinalState) {
  const Result on = run(kHeadless + "--n 2000 --steps 3");
  const Result off = run(kHeadless + "--n 2000 --steps 3 --checksum off");
  ASSERT_EQ(on.status, 0) << on.out;
  ASSERT_EQ(off.status, 0) << off.out;
  EXPECT_EQ(on.out.find("checksum=off"), std::string::npos) << on.out;
  EXPECT_NE(off.out.find("checksum=off"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find(" n=2000 steps=3 "), std::string::npos) << off.out;
  const Result bench = run("bench --engine cpu --n 1000 --steps 2 --warmup 1 --checksum off");
  EXPECT_EQ(bench.status, 2) << bench.out;
  EXPECT_NE(bench.out.find("--checksum off does not apply to murmur bench"), std::string::npos) << bench.out;
  const Result viewer = run("--engine cpu --n 1000 --checksum off");
  EXPECT_EQ(viewer.status, 2) << viewer.out;
  EXPECT_NE(viewer.out.find("--checksum off applies to headless runs only"), std::string::npos) << viewer.out;
}

// --rule names a row of the rule table; --rules, its old name, still runs the same rule.
TEST(Cli, RuleAndItsOldNameRunTheSameRule) {
  const std::string world = kHeadless + "--scenario dense --n 1500 --steps 5 --seed 7 ";
  const Result reynolds = run(world + "--rule reynolds");
  const Result old = run(world + "--rules reynolds");
  const Result cis565 = run(world + "--rule cis565");
  ASSERT_EQ(reynolds.status, 0) << reynolds.out;
  ASSERT_EQ(old.status, 0) << old.out;
  ASSERT_EQ(cis565.status, 0) << cis565.out;
  EXPECT_FALSE(sum(reynolds.out).empty()) << reynolds.out;
  EXPECT_EQ(sum(reynolds.out), sum(old.out));
  EXPECT_NE(sum(reynolds.out), sum(cis565.out));
}

// --speed sets the active rule's speed: for the boids rules their top speed, as --max-speed does.
TEST(Cli, SpeedSetsTheActiveRulesSpeed) {
  const std::string world = kHeadless + "--scenario dense --n 1500 --steps 5 --seed 7 ";
  const Result shared = run(world + "--speed 0.5");
  const Result own = run(world + "--max-speed 0.5");
  const Result plain = run(world);
  ASSERT_EQ(shared.status, 0) << shared.out;
  ASSERT_EQ(own.status, 0) << own.out;
  EXPECT_FALSE(sum(shared.out).empty()) << shared.out;
  EXPECT_EQ(sum(shared.out), sum(own.out));
  EXPECT_NE(sum(shared.out), sum(plain.out));
}

namespace {

// A rule's shared options against its own (`world` + `shared` writing the state to `out`, then
// `world` + `named`, which must step alike, and `world` + `other`, another boundary, which must
// not); the state of the first.
core::Bodies expectSharedOptionsAreTheRules(const std::string& world, const std::string& shared,
                                            const std::string& named, const std::string& other,
                                            const std::string& out) {
  const Result own = run(world + shared + " --out " + out);
  const Result same = run(world + named);
  const Result apart = run(world + other);
  EXPECT_EQ(own.status, 0) << own.out;
  EXPECT_EQ(same.status, 0) << same.out;
  EXPECT_EQ(apart.status, 0) << apart.out;
  EXPECT_FALSE(sum(own.out).empty()) << own.out;
  EXPECT_EQ(sum(own.out), sum(same.out));
  EXPECT_NE(sum(own.out), sum(apart.out));
  return own.status == 0 ? core::readBodiesFile(out) : core::Bodies{};
}

}  // namespace

// --rule vicsek: the shared options set its radius, speed and noise; the boids start at its speed;
// its boundary is periodic unless --boundary says otherwise.
TEST(Cli, VicsekRunsWithTheSharedOptionsOnItsOwnBoundary) {
  const std::string world = kHeadless + "--rule vicsek --scenario uniform --half-size 12 --dims 2 --n 600 --seed 3 ";
  const std::string out = testing::TempDir() + "vicsek_state.txt";
  const core::Bodies b = expectSharedOptionsAreTheRules(
      world, "--steps 20 --radius 1.5 --speed 0.05 --noise 0.4",
      "--steps 20 --vicsek-radius 1.5 --vicsek-speed 0.05 --vicsek-noise 0.4 --boundary periodic",
      "--steps 20 --radius 1.5 --speed 0.05 --noise 0.4 --boundary wrap", out);
  // Every boid moves at v0.
  ASSERT_EQ(b.size(), 600u);
  for (const core::Vec4& v : b.vel) ASSERT_NEAR(std::hypot(v.x, v.y), 0.05, 1e-6);
  // Zero steps: the uniform start is at v0 already.
  const Result start = run(world + "--steps 0 --speed 0.05 --out " + out);
  ASSERT_EQ(start.status, 0) << start.out;
  for (const core::Vec4& v : core::readBodiesFile(out).vel) ASSERT_NEAR(std::hypot(v.x, v.y), 0.05, 1e-6);
}

// --rule couzin: the shared options set its speed and noise; its world is open unless --boundary
// says otherwise, so a parallel group (a wide zone of orientation) flies out of the half-size that
// placed it; every body at s.
TEST(Cli, CouzinRunsWithTheSharedOptionsInAnOpenWorld) {
  const std::string world = kHeadless + "--rule couzin --zone-orientation 10 --scenario uniform --half-size 30 --n 200 --seed 5 --steps 300 ";
  const std::string out = testing::TempDir() + "couzin_state.txt";
  const core::Bodies b = expectSharedOptionsAreTheRules(world, "--speed 0.5 --noise 0.1",
                                                        "--couzin-speed 0.5 --couzin-noise 0.1 --boundary open",
                                                        "--speed 0.5 --noise 0.1 --boundary reflect", out);
  ASSERT_EQ(b.size(), 200u);
  float reach = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_NEAR(std::hypot(std::hypot(b.vel[i].x, b.vel[i].y), b.vel[i].z), 0.5, 1e-5);
    reach = std::max({reach, std::fabs(b.pos[i].x), std::fabs(b.pos[i].y), std::fabs(b.pos[i].z)});
  }
  EXPECT_GT(reach, 30.0f) << "no body left the start's box in 300 steps of 0.5";
}

// --topological K: the default world runs it on rows; --radius is its cutoff, the same run as
// --topological-radius, and a cutoff changes the run.
TEST(Cli, TopologicalTakesRadiusAsItsCutoff) {
  const std::string world = kHeadless + "--n 3000 --steps 10 --topological 7 ";
  const Result byRadius = run(world + "--radius 4");
  const Result named = run(world + "--topological-radius 4");
  const Result open = run(world);
  ASSERT_EQ(byRadius.status, 0) << byRadius.out;
  ASSERT_EQ(named.status, 0) << named.out;
  ASSERT_EQ(open.status, 0) << open.out;
  EXPECT_NE(byRadius.out.find("pipeline=rows"), std::string::npos) << byRadius.out;
  EXPECT_EQ(sum(byRadius.out), sum(named.out));
  EXPECT_NE(sum(byRadius.out), sum(open.out));
}

TEST(Cli, NoRenderNeedsHeadless) {
  const Result r = run("--no-render --engine cpu");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--headless"), std::string::npos);
}

TEST(Cli, EveryForceAndPipelineRunsHeadless) {
  for (const char* force : {"boids", "gravity"}) {
    // Every pipeline that serves boids (the pipeline table's list) runs both forces.
    for (core::Pipeline p : core::pipelinesFor(core::ForceMode::Boids)) {
      const std::string pipe = core::toString(p);
      const Result r = run(kHeadless + "--n 2000 --steps 3 --force " + force + " --pipeline " + pipe);
      ASSERT_EQ(r.status, 0) << r.out;
      EXPECT_NE(r.out.find(std::string("force=") + force + " pipeline=" + pipe), std::string::npos) << r.out;
      EXPECT_NE(r.out.find("ms_per_step="), std::string::npos);
      EXPECT_NE(r.out.find("checksum="), std::string::npos);
    }
  }
}

// The engine's step count goes on from a saved state's: 5 steps, then 3 more from the file, is a
// state at step 8 (warm-up steps count too).
TEST(Cli, AStateFromAFileGoesOnFromItsStep) {
  const std::string out1 = ::testing::TempDir() + "murmur_steps1.txt";
  const std::string out2 = ::testing::TempDir() + "murmur_steps2.txt";
  ASSERT_EQ(run(kHeadless + "--n 300 --steps 5 --out " + out1).status, 0);
  const Result b = run(kHeadless + "--warmup 1 --steps 2 --scenario file:" + out1 + " --out " + out2);
  ASSERT_EQ(b.status, 0) << b.out;
  std::ifstream f1(out1), f2(out2);
  const std::string text1((std::istreambuf_iterator<char>(f1)), std::istreambuf_iterator<char>());
  const std::string text2((std::istreambuf_iterator<char>(f2)), std::istreambuf_iterator<char>());
  EXPECT_NE(text1.find("# step: 5\n"), std::string::npos) << text1.substr(0, 200);
  EXPECT_NE(text2.find("# step: 8\n"), std::string::npos) << text2.substr(0, 200);
}

TEST(Cli, OutThenFileScenarioRoundTrips) {
  const std::string out1 = ::testing::TempDir() + "murmur_state1.txt";
  const std::string out2 = ::testing::TempDir() + "murmur_state2.txt";
  Result a = run(kHeadless + "--n 500 --steps 5 --scenario plummer --pipeline naive --out " + out1);
  ASSERT_EQ(a.status, 0) << a.out;
  // Zero steps from the file reproduce the file exactly.
  Result b = run(kHeadless + "--steps 0 --scenario file:" + out1 + " --out " + out2);
  ASSERT_EQ(b.status, 0) << b.out;
  std::ifstream f1(out1), f2(out2);
  std::string s1((std::istreambuf_iterator<char>(f1)), {}), s2((std::istreambuf_iterator<char>(f2)), {});
  EXPECT_GT(s1.size(), 500u * 14);
  EXPECT_EQ(s1, s2);
  // Continuing from the file is the same as having run longer: same checksum either way.
  Result c = run(kHeadless + "--n 500 --steps 8 --scenario plummer --pipeline naive");
  Result d = run(kHeadless + "--steps 3 --pipeline naive --scenario file:" + out1);
  ASSERT_EQ(c.status, 0);
  ASSERT_EQ(d.status, 0);
  const auto sum = [](const std::string& s) { return s.substr(s.find("checksum=")); };
  // The leapfrog keeps its acceleration across steps, the file run recomputes it from the same
  // positions in the same (id) order, so the states agree bit for bit.
  EXPECT_EQ(sum(c.out), sum(d.out));
}

// A body file in the layout of the Milky Way-Andromeda data set (`mass x y z vx vy vz`, each
// galaxy's disk, bulge and halo in blocks): --select keeps the disks and bulges, --n takes every
// 2nd of them, the scales change the units, and --out after zero steps shows exactly those bodies.
TEST(Cli, FileBodiesAreSelectedSubsetAndScaled) {
  const std::string in = ::testing::TempDir() + "murmur_mw_m31.txt";
  const std::string out = ::testing::TempDir() + "murmur_mw_m31_out.txt";
  {
    std::ofstream f(in);
    for (int i = 0; i < 48; ++i)  // two galaxies: disk 8, bulge 8, halo 8
      f << 1 + i % 5 << " " << i << " " << -i << " " << 0.5 * i << " " << 2 * i << " 1 " << -i << "\n";
  }
  const Result r = run(kHeadless + "--steps 0 --scenario file:" + in +
                       " --select 0-15,24-39 --n 16 --scale-length 4 --scale-velocity 0.5 --scale-mass 2 --out " + out);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("kept 32 of the 48 bodies"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("an even subset of 16 of 32: one body in every 2"), std::string::npos) << r.out;
  std::ifstream f(out);
  std::string line;
  int k = 0;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    const int i = k < 8 ? 2 * k : 24 + 2 * (k - 8);  // the file line of the k-th body kept
    double m, x, y, z, vx, vy, vz;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf %lf %lf %lf %lf %lf %lf", &m, &x, &y, &z, &vx, &vy, &vz), 7) << line;
    EXPECT_EQ(m, 2.0 * (1 + i % 5)) << k;
    EXPECT_EQ(x, 4.0 * i);
    EXPECT_EQ(y, -4.0 * i);
    EXPECT_EQ(z, 2.0 * i);
    EXPECT_EQ(vx, 1.0 * i);
    EXPECT_EQ(vy, 0.5);
    EXPECT_EQ(vz, -0.5 * i);
    ++k;
  }
  EXPECT_EQ(k, 16);
}

// A dense world so sparse that its grid at the rule's cell width would need more than 2^32 cells
// (a millionth of a neighbour a boid) runs: its cells widen (core::boidGridCellCap).
TEST(Cli, AVerySparseDenseWorldRuns) {
  const Result r = test::runCommand("timeout 120 " + test::murmurExe() + " " + kHeadless +
                                    "--scenario dense --neighbours 0.000001 --n 20k --steps 2");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("steps=2"), std::string::npos) << r.out;
}

TEST(Cli, HelpExitsZero) {
  const Result r = run("--help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("--pipeline"), std::string::npos);
}

TEST(Cli, ParamsFileIsApplied) {
  const std::string path = ::testing::TempDir() + "murmur_cli_params.json";
  { std::ofstream(path) << R"({"pipeline": "scattered", "blockSize": 128})"; }
  const Result r = run(kHeadless + "--n 300 --steps 1 --params " + path);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("pipeline=scattered"), std::string::npos) << r.out;
  // The CPU engine has no block size: the summary says block=- whatever the file sets.
  EXPECT_NE(r.out.find("block=- "), std::string::npos) << r.out;
}

TEST(Cli, AccuracyReportsEachPipeline) {
  const Result r = run("accuracy --engine cpu --n 3000 --drift-n 200");
  ASSERT_EQ(r.status, 0) << r.out;
  // Two tables (force error, energy drift), each with a row per pipeline.
  EXPECT_NE(r.out.find("relative force error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("relative energy drift"), std::string::npos) << r.out;
  for (core::Pipeline pipeline : core::pipelinesFor(core::ForceMode::Gravity)) {
    const std::string p = core::toString(pipeline);
    const size_t first = r.out.find(std::string("\n") + p + " ");
    ASSERT_NE(first, std::string::npos) << p << "\n" << r.out;
    EXPECT_NE(r.out.find(std::string("\n") + p + " ", first + 1), std::string::npos) << p << "\n" << r.out;
  }
  EXPECT_EQ(run("accuracy --engine cpu --drift-n many").status, 2);
}

TEST(Cli, SplatFramesAreRecordedAsNumberedPngs) {
  // The splat draw mode through the CPU executor and the GL pass (Mesa here), every second frame
  // written as a PNG: frames 0, 2, 4 of 5.
  const std::string dir = ::testing::TempDir();
  for (int i = 0; i < 4; ++i) std::remove((dir + "murmur_splat_" + std::to_string(i) + ".png").c_str());
  const Result r = run("--headless --engine cpu --n 3000 --frames 5 --draw splat --slab 80 --width 96 --height 64 "
                       "--record-every 2 --record " + dir + "murmur_splat_%01d.png");
  if (r.out.find("no offscreen OpenGL context") != std::string::npos) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("render_ms="), std::string::npos) << r.out;
  // Only the recorded frames are drawn (the splat draw mode too).
  EXPECT_NE(r.out.find("frames_drawn=3 frames_written=3"), std::string::npos) << r.out;
  for (int i = 0; i < 4; ++i) {
    std::ifstream f(dir + "murmur_splat_" + std::to_string(i) + ".png", std::ios::binary);
    EXPECT_EQ(f.good(), i < 3) << "frame " << i << "\n" << r.out;
  }
}

TEST(Cli, WindowViewerRunsUnderAVirtualDisplay) {
  // The GLFW + ImGui window, drawn by Mesa under Xvfb: opens, runs frames, writes a screenshot of
  // the real window and closes with status 0.
  if (test::runCommand("command -v xvfb-run").status != 0) GTEST_SKIP() << "xvfb-run not installed (package xvfb)";
  const std::string png = ::testing::TempDir() + "murmur_window.png";
  std::remove(png.c_str());
  const Result r = test::runCommand("xvfb-run -a -s '-screen 0 1024x768x24' " + test::murmurExe() +
                                    " --engine cpu --n 800 --frames 20 --width 320 --height 240 --screenshot " + png);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("screenshot: " + png), std::string::npos) << r.out;
  std::ifstream f(png, std::ios::binary);
  std::string head(8, '\0');
  f.read(&head[0], 8);
  EXPECT_EQ(head, std::string("\x89PNG\r\n\x1a\n", 8));
}

// The window does what its options say: --steps closes it once they are done, --csv logs from
// the first frame; options only a headless run can honour are refused in one line.
TEST(Cli, TheWindowTakesStepsAndCsvAndRefusesHeadlessOptions) {
  for (const char* opt : {"--out x.txt", "--warmup 5", "--steps-per-frame 2", "--record-every 3", "--checksum off",
                          "--record frames/f%04d.png"}) {
    const Result r = run(std::string("--engine cpu --n 500 ") + opt);
    EXPECT_EQ(r.status, 2) << opt << ": " << r.out;
    EXPECT_EQ(lineCount(r.out), 1) << opt << ": " << r.out;
    EXPECT_NE(r.out.find(std::string(opt).substr(0, std::string(opt).find(' '))), std::string::npos) << r.out;
  }
  if (test::runCommand("command -v xvfb-run").status != 0) GTEST_SKIP() << "xvfb-run not installed (package xvfb)";
  const std::string csv = ::testing::TempDir() + "murmur_window_fps.csv";
  std::remove(csv.c_str());
  const Result r = test::runCommand("timeout 120 xvfb-run -a -s '-screen 0 1024x768x24' " + test::murmurExe() +
                                    " --engine cpu --n 800 --steps 120 --width 320 --height 240 --csv " + csv);
  ASSERT_EQ(r.status, 0) << r.out;  // closed by itself: timeout would give 124
  EXPECT_NE(r.out.find("window closed after 120 steps, FPS log " + csv), std::string::npos) << r.out;
  std::ifstream f(csv);
  std::string header;
  std::getline(f, header);
  EXPECT_EQ(header.rfind("timestamp,git_sha,gpu", 0), 0u) << header;
}

// Gravity with no --scenario is a world where gravity shows: two galaxies colliding, on the
// pipeline the table names for it (the tree), unless a pipeline or a world is asked for.
TEST(Cli, GravityWithNoScenarioIsTwoGalaxies) {
  const Result r = run(kHeadless + "--force gravity --n 600 --steps 2");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("force=gravity pipeline=tree scenario=galaxies n=600"), std::string::npos) << r.out;
  const Result naive = run(kHeadless + "--force gravity --pipeline naive --n 600 --steps 2");
  ASSERT_EQ(naive.status, 0) << naive.out;
  EXPECT_NE(naive.out.find("pipeline=naive scenario=galaxies"), std::string::npos) << naive.out;
  const Result plummer = run(kHeadless + "--force gravity --scenario plummer --n 600 --steps 2");
  ASSERT_EQ(plummer.status, 0) << plummer.out;
  EXPECT_NE(plummer.out.find("scenario=plummer"), std::string::npos) << plummer.out;
  EXPECT_EQ(plummer.out.find("pipeline=tree"), std::string::npos) << plummer.out;
}

TEST(Cli, CudaEngineWithoutAGpuSaysSo) {
  if (app::cudaAvailable()) GTEST_SKIP() << "a CUDA device is present";
  const Result r = run("--headless --no-render --engine cuda --n 10 --steps 1");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(lineCount(r.out), 1) << r.out;
  // A build without the CUDA engine (the UBSan job's) says that instead.
  if (r.out.find("this build has no CUDA engine") != std::string::npos) return;
  // Either there is no driver at all, or a driver without a device: never "driver version is
  // insufficient" when what is missing is the GPU.
  EXPECT_NE(r.out.find("no NVIDIA GPU"), std::string::npos) << r.out;
}

TEST(Progress, ClockTextAndQuietShortRuns) {
  EXPECT_EQ(app::clockText(0), "0:00");
  EXPECT_EQ(app::clockText(61.4), "1:01");
  EXPECT_EQ(app::clockText(3725), "1:02:05");
  // A short run into a pipe prints the device line and the summary, no progress lines.
  const Result r = run(kHeadless + "--n 500 --steps 50");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(lineCount(r.out), 2) << r.out;
}

TEST(Cli, HeadlessRunShapesThatWouldDoLessThanAskedAreRefused) {
  const std::string png = ::testing::TempDir() + "murmur_refused.png";
  struct Case {
    std::string args, mention;
  };
  const Case cases[] = {
      {"--steps 300 --frames 1", "--frames"},
      {"--screenshot " + png, "--no-render"},
      {"--record " + ::testing::TempDir() + "murmur_refused.mp4", "--no-render"},
  };
  for (const Case& c : cases) {
    const Result r = run(kHeadless + "--n 100 " + c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_EQ(lineCount(r.out), 1) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.mention), std::string::npos) << c.args << "\n" << r.out;
  }
  std::ifstream f(png);
  EXPECT_FALSE(f.good()) << "nothing is written by a refused run";
}

TEST(Cli, AScreenshotRunRendersOnlyTheLastFrame) {
  // Offscreen rendering (EGL: Mesa here, the NVIDIA driver on a GPU machine).
  const std::string png = ::testing::TempDir() + "murmur_last_frame.png";
  const std::string base = "--headless --engine cpu --n 300 --width 64 --height 48 ";
  const Result shot = run(base + "--steps 12 --screenshot " + png);
  if (shot.out.find("rendering off") != std::string::npos || shot.out.find("no offscreen OpenGL") != std::string::npos)
    GTEST_SKIP() << "no offscreen OpenGL context here";
  ASSERT_EQ(shot.status, 0) << shot.out;
  EXPECT_NE(shot.out.find("steps=12 "), std::string::npos) << shot.out;
  // One frame drawn, written as the screenshot; one frame is no rate.
  EXPECT_NE(shot.out.find("frames_drawn=1 frames_written=1"), std::string::npos) << shot.out;
  EXPECT_NE(shot.out.find(" fps=- "), std::string::npos) << shot.out;
  // Without a screenshot, a rendering run draws every step (the frame rate is the measurement).
  const Result every = run(base + "--steps 12");
  ASSERT_EQ(every.status, 0) << every.out;
  EXPECT_NE(every.out.find("frames_drawn=12 frames_written=0"), std::string::npos) << every.out;
  // PNG frames every 5 steps: only those are drawn, 3 of them (steps 0, 5 and 10).
  const Result rec = run(base + "--steps 12 --record-every 5 --record " + ::testing::TempDir() + "murmur_every_%03d.png");
  ASSERT_EQ(rec.status, 0) << rec.out;
  EXPECT_NE(rec.out.find("frames_drawn=3 frames_written=3"), std::string::npos) << rec.out;
  // With a screenshot too, the last step (11, not a recorded one) is drawn once more for it.
  const Result both = run(base + "--steps 12 --record-every 5 --record " + ::testing::TempDir() +
                          "murmur_both_%03d.png --screenshot " + png);
  ASSERT_EQ(both.status, 0) << both.out;
  EXPECT_NE(both.out.find("frames_drawn=4 frames_written=4"), std::string::npos) << both.out;
  // Steps 0..9 with one kept every 3 ends on a recorded frame (9): the screenshot is that frame.
  const Result last = run(base + "--steps 10 --record-every 3 --record " + ::testing::TempDir() +
                          "murmur_last_%03d.png --screenshot " + png);
  ASSERT_EQ(last.status, 0) << last.out;
  EXPECT_NE(last.out.find("frames_drawn=4 frames_written=5"), std::string::npos) << last.out;
  // --frames with --steps-per-frame and a screenshot: 5 frames of 3 steps, the last one drawn.
  const Result spf = run(base + "--frames 5 --steps-per-frame 3 --screenshot " + png);
  ASSERT_EQ(spf.status, 0) << spf.out;
  EXPECT_NE(spf.out.find("steps=15 "), std::string::npos) << spf.out;
  EXPECT_NE(spf.out.find("frames_drawn=1 frames_written=1"), std::string::npos) << spf.out;
  // Without outputs the frames are the measurement: all 5 are drawn.
  const Result measured = run(base + "--frames 5 --steps-per-frame 3");
  ASSERT_EQ(measured.status, 0) << measured.out;
  EXPECT_NE(measured.out.find("frames_drawn=5 frames_written=0"), std::string::npos) << measured.out;
}

namespace {
// The value of `key=` on the summary line, as a number (NaN when absent).
double summaryValue(const std::string& out, const std::string& key) {
  const size_t at = out.find(" " + key + "=");
  if (at == std::string::npos) return std::nan("");
  return std::strtod(out.c_str() + at + key.size() + 2, nullptr);
}

// One CSV record's cells, quoted cells unquoted (the gpu column may hold commas).
std::vector<std::string> csvCells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    if (quoted && line[i] == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (line[i] == '"') {
      quoted = !quoted;
    } else if (line[i] == ',' && !quoted) {
      cells.emplace_back();
    } else {
      cells.back() += line[i];
    }
  }
  return cells;
}
}  // namespace

TEST(Cli, RecordEveryDrawsOnlyTheFramesItWrites) {
  // 12 steps, a PNG every 4: steps 0, 4 and 8 are drawn and written, nothing else is drawn.
  const std::string dir = ::testing::TempDir();
  const std::string pattern = dir + "murmur_kept_%04d.png";
  const auto frame = [&](int i) {
    char name[64];
    std::snprintf(name, sizeof name, "murmur_kept_%04d.png", i);
    return dir + name;
  };
  for (int i = 0; i < 13; ++i) std::remove(frame(i).c_str());
  const std::string csv = dir + "murmur_kept.csv";
  std::remove(csv.c_str());
  const Result r = run("--headless --engine cpu --n 500 --width 64 --height 48 --steps 12 --record-every 4 --record " +
                       pattern + " --csv " + csv);
  if (r.out.find("no offscreen OpenGL context") != std::string::npos) GTEST_SKIP() << r.out;
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("steps=12 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("frames_drawn=3 frames_written=3"), std::string::npos) << r.out;
  for (int i = 0; i < 13; ++i) {
    std::ifstream f(frame(i), std::ios::binary);
    EXPECT_EQ(f.good(), i < 3) << "frame " << i << "\n" << r.out;
  }
  // The CSV row's render_ms is the median over the frames drawn: the summary's own.
  std::ifstream in(csv);
  std::string header, row;
  ASSERT_TRUE(std::getline(in, header) && std::getline(in, row)) << r.out;
  const std::vector<std::string> names = csvCells(header), cells = csvCells(row);
  ASSERT_EQ(names.size(), cells.size()) << header << "\n" << row;
  const auto col = std::find(names.begin(), names.end(), "render_ms");
  ASSERT_NE(col, names.end()) << header;
  const std::string& cell = cells[static_cast<size_t>(col - names.begin())];
  ASSERT_FALSE(cell.empty()) << row;
  const double csvRender = std::stod(cell);
  const double summaryRender = summaryValue(r.out, "render_ms");
  ASSERT_GT(summaryRender, 0) << r.out;
  EXPECT_NEAR(csvRender, summaryRender, 1e-3 + 1e-3 * summaryRender) << header << "\n" << row << "\n" << r.out;
}

TEST(Cli, SubcommandHelpListsTheOptionsThatApply) {
  const Result acc = run("accuracy --help");
  EXPECT_EQ(acc.status, 0);
  for (const char* opt : {"--n", "--scenario", "--engine", "--softening"})
    EXPECT_NE(acc.out.find(opt), std::string::npos) << opt << "\n" << acc.out;
  const Result bench = run("bench --help");
  EXPECT_EQ(bench.status, 0);
  for (const char* opt : {"--n", "--pipeline", "--csv", "--steps", "--preset"})
    EXPECT_NE(bench.out.find(opt), std::string::npos) << opt << "\n" << bench.out;
  // murmur's own options that a sweep takes are listed too; those it refuses are not.
  for (const char* opt : {"--engine ", "--scenario ", "--seed ", "--neighbours ", "--theta ", "--width "})
    EXPECT_NE(bench.out.find(opt), std::string::npos) << opt << "\n" << bench.out;
  for (const char* opt : {"--out ", "--screenshot ", "--frames ", "--trajectory ", "--observe-every ", "--trajectory-every "})
    EXPECT_EQ(bench.out.find(opt), std::string::npos) << opt << "\n" << bench.out;
  // Those it does not list it refuses rather than ignores.
  for (const char* opt : {"--observe-every 3", "--trajectory-every 5"}) {
    const Result r = run(std::string("bench --engine cpu --n 100 --steps 1 ") + opt);
    EXPECT_EQ(r.status, 2) << opt << "\n" << r.out;
    EXPECT_NE(r.out.find("does not apply to murmur bench"), std::string::npos) << opt << "\n" << r.out;
  }
}

// Every value in --help is named by what it is, never CLI11's TEXT.
TEST(Cli, HelpNamesTheValues) {
  const Result all = run("--help-all");
  ASSERT_EQ(all.status, 0);
  EXPECT_EQ(all.out.find("TEXT"), std::string::npos) << all.out;
  for (const char* named : {"--n N ", "--zoom X ", "--pipeline NAME ", "--out FILE ", "--params FILE ", "--scenario NAME "})
    EXPECT_NE(all.out.find(named), std::string::npos) << named;
  const Result bench = run("bench --help");
  EXPECT_NE(bench.out.find("--n LIST "), std::string::npos) << bench.out;
  EXPECT_NE(bench.out.find("--csv FILE "), std::string::npos) << bench.out;
}

// A misspelt option is named with the closest one murmur has; a word unlike any option is not.
TEST(Cli, MisspeltOptionSuggestsTheClosest) {
  const struct {
    std::string args, says;
  } cases[] = {
      {"--pipline rows", "--pipline: no such option; did you mean --pipeline?"},
      {kHeadless + "--stpes 3", "--stpes: no such option; did you mean --steps?"},
      {"bench --enigne cpu", "--enigne: no such option; did you mean --engine?"},
      {"bench --repeat 2", "--repeat: no such option; did you mean --repeats?"},
      {"--frobnicate 3", "--frobnicate: no such option (murmur --help lists them)"},
  };
  for (const auto& c : cases) {
    const Result r = run(c.args);
    EXPECT_EQ(r.status, 2) << c.args << "\n" << r.out;
    EXPECT_NE(r.out.find(c.says), std::string::npos) << c.args << "\n" << r.out;
    EXPECT_EQ(lineCount(r.out), 1) << c.args << "\n" << r.out;
  }
}

TEST(Cli, UnknownScenarioListsFilePaths) {
  const Result r = run(kHeadless + "--scenario moon");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("file:PATH"), std::string::npos) << r.out;
}
