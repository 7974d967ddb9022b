#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "core/body_io.h"
#include "core/cpu_engine.h"
#include "core/errors.h"
#include "core/metrics.h"
#include "core/scenarios.h"
#include "test_helpers.h"

using namespace murmur::core;

namespace {
std::string tempPath(const std::string& name) {
  return ::testing::TempDir() + "murmur_" + name;
}
std::string writeText(const std::string& name, const std::string& text) {
  const std::string path = tempPath(name);
  std::ofstream(path) << text;
  return path;
}
std::string readText(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}
// A species that differs between neighbouring ids, often not 0, and takes 0 and 255 too.
Species speciesOf(uint32_t id) { return static_cast<Species>((id * 37u + 11u) % kSpeciesCount); }
std::string errorOf(const std::string& path) {
  try {
    readBodiesFile(path);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST(BodyFiles, RoundTripIsExact) {
  const Bodies b = murmur::test::randomBodies(777, 50.0f, 3.0f, 99);
  const std::string path = tempPath("roundtrip.txt");
  writeBodiesFile(path, b);
  const Bodies r = readBodiesFile(path);
  ASSERT_EQ(r.size(), b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(r.pos[i].x, b.pos[i].x);
    EXPECT_EQ(r.pos[i].w, b.pos[i].w);
    EXPECT_EQ(r.vel[i].z, b.vel[i].z);
  }
  EXPECT_EQ(stateChecksum(r), stateChecksum(b));
}

TEST(BodyFiles, CommentsAndBlankLinesAreSkipped) {
  const Bodies b = readBodiesFile(writeText("comments.txt",
                                            "# header\n\n  1 0 0 0 0 0 0  # trailing\n\t2.5 1 2 3 -1 -2 -3\r\n"));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_FLOAT_EQ(b.pos[1].w, 2.5f);
  EXPECT_FLOAT_EQ(b.pos[1].z, 3.0f);
  EXPECT_FLOAT_EQ(b.vel[1].x, -1.0f);
  EXPECT_EQ(b.id[1], 1u);
}

TEST(BodyFiles, MalformedLinesReportTheirLineNumber) {
  EXPECT_NE(errorOf(writeText("six.txt", "1 0 0 0 0 0 0\n# c\n1 2 3 4 5 6\n")).find("line 3"), std::string::npos);
  EXPECT_NE(errorOf(writeText("word.txt", "1 0 0 0 0 0 0\n1 0 0 x 0 0 0\n")).find("line 2"), std::string::npos);
  EXPECT_NE(errorOf(writeText("nan.txt", "1 nan 0 0 0 0 0\n")).find("line 1"), std::string::npos);
  EXPECT_NE(errorOf(writeText("nine.txt", "1 0 0 0 0 0 0 0 0\n")).find("found 9"), std::string::npos);
  EXPECT_NE(errorOf(writeText("neg.txt", "-1 0 0 0 0 0 0\n")).find("mass"), std::string::npos);
  EXPECT_NE(errorOf(writeText("glued.txt", "1 0 0 0 0 0 0abc\n")).find("line 1"), std::string::npos);
  EXPECT_NE(errorOf(writeText("empty.txt", "# nothing\n")).find("no bodies"), std::string::npos);
  EXPECT_NE(errorOf(tempPath("missing.txt")).find("cannot open"), std::string::npos);
}

TEST(BodyFiles, UnwritableOutputThrows) {
  EXPECT_THROW(writeBodiesFile("/nonexistent-dir/out.txt", Bodies{}), UsageError);
}

TEST(BodyFiles, HeaderRoundTripsAndBindsTheCount) {
  const Bodies b = murmur::test::randomBodies(40, 10.0f, 1.0f, 5);
  const std::string path = tempPath("header.txt");
  StateHeader h;
  h.force = "boids";
  h.halfSize = 37.5f;
  h.step = 1234;
  h.paramsJson = "{\"halfSize\":37.5}";
  writeBodiesFile(path, b, h);
  StateHeader r;
  EXPECT_EQ(readBodiesFile(path, &r).size(), 40u);
  EXPECT_TRUE(r.hasBodies);
  EXPECT_EQ(r.bodies, 40u);
  EXPECT_EQ(r.force, "boids");
  EXPECT_EQ(r.halfSize, 37.5f);
  EXPECT_EQ(r.step, 1234u);
  EXPECT_EQ(r.paramsJson, h.paramsJson);
  const StateHeader only = readStateHeader(path);
  EXPECT_EQ(only.step, 1234u);
  EXPECT_EQ(only.paramsJson, h.paramsJson);
  // One body line fewer: well formed, but not what the header promised.
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  text.erase(text.rfind('\n', text.size() - 2) + 1);
  EXPECT_NE(errorOf(writeText("short.txt", text)).find("header says 40 bodies, the file has 39"), std::string::npos);
  // The older one-line header binds too.
  EXPECT_NE(errorOf(writeText("old.txt", "# murmuration bodies: 2\n1 0 0 0 0 0 0\n")).find("header says 2"),
            std::string::npos);
}

TEST(BodyFiles, BadHeaderValuesNameTheLine) {
  EXPECT_NE(errorOf(writeText("h1.txt", "# murmuration state 1\n# force: magnetic\n1 0 0 0 0 0 0\n")).find("line 2"),
            std::string::npos);
  EXPECT_NE(errorOf(writeText("h2.txt", "# murmuration state 1\n# bodies: -3\n1 0 0 0 0 0 0\n")).find("bodies"),
            std::string::npos);
  EXPECT_NE(errorOf(writeText("h3.txt", "# murmuration state 1\n# colour: red\n1 0 0 0 0 0 0\n")).find("unknown"),
            std::string::npos);
  // Outside a state header a comment is only a comment.
  EXPECT_EQ(errorOf(writeText("h4.txt", "# colour: red\n1 0 0 0 0 0 0\n")), "");
}

TEST(BodyFiles, SubnormalsByteOrderMarkAndSpecialFiles) {
  Bodies b = readBodiesFile(writeText("sub.txt", "\xEF\xBB\xBF" "1 1.00000022e-39 0 0 1e-45 0 0\n"));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_GT(b.pos[0].x, 0.0f);
  EXPECT_LT(b.pos[0].x, 1.2e-38f);
  EXPECT_GT(b.vel[0].x, 0.0f);
  // Written and read back bit for bit.
  const std::string path = tempPath("sub_out.txt");
  writeBodiesFile(path, b);
  const Bodies r = readBodiesFile(path);
  EXPECT_EQ(r.pos[0].x, b.pos[0].x);
  EXPECT_EQ(r.vel[0].x, b.vel[0].x);
  // Overflow is still refused.
  EXPECT_NE(errorOf(writeText("big.txt", "1 1e39 0 0 0 0 0\n")).find("line 1"), std::string::npos);
  EXPECT_NE(errorOf(::testing::TempDir()).find("folder"), std::string::npos);
  EXPECT_NE(errorOf("/dev/null").find("not a regular file"), std::string::npos);
}

// Species: the CPU engine's output (the coherent pipeline keeps its state in cell order, so the
// species has travelled with its body through every reorder) written and read back exactly.
TEST(BodyFiles, SpeciesRoundTripsFromTheCpuEngine) {
  SimParams p = defaultParams();
  p.pipeline = Pipeline::Coherent;
  ScenarioSpec spec;
  spec.name = "dense";
  spec.n = 3000;
  const Scenario sc = makeScenario(spec, p);
  p.halfSize = sc.halfSize;
  Bodies start = sc.bodies;
  for (size_t i = 0; i < start.size(); ++i) start.species[i] = speciesOf(start.id[i]);
  CpuEngine engine(p);
  engine.reset(start);
  engine.step(4);
  const Bodies b = engine.readBodies();
  ASSERT_EQ(b.species.size(), b.size());
  const std::string path = tempPath("species_engine.txt");
  StateHeader h;
  h.force = "boids";
  h.step = engine.stepCount();
  writeBodiesFile(path, b, h);
  const std::string text = readText(path);
  EXPECT_NE(text.find("\n# mass x y z vx vy vz species\n"), std::string::npos);
  StateHeader rh;
  const Bodies r = readBodiesFile(path, &rh);
  EXPECT_EQ(rh.step, 4u);
  ASSERT_EQ(r.size(), b.size());
  ASSERT_EQ(r.species.size(), b.size());
  for (size_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(r.species[i], speciesOf(static_cast<uint32_t>(i))) << "body " << i;
    ASSERT_EQ(r.species[i], b.species[i]) << "body " << i;
  }
  EXPECT_EQ(stateChecksum(r), stateChecksum(b));
  // And back into an engine: the state it holds is the file's, species included.
  engine.reset(r);
  const Bodies again = engine.readBodies();
  EXPECT_EQ(again.species, b.species);
}

TEST(BodyFiles, SevenColumnsLoadAsSpeciesZero) {
  const Bodies b = readBodiesFile(writeText("seven.txt", "# mass x y z vx vy vz\n1 0 0 0 0 0 0\n2 1 2 3 4 5 6\n"));
  ASSERT_EQ(b.size(), 2u);
  EXPECT_TRUE(b.species.empty());  // species 0 throughout
  EXPECT_EQ(checkBodies(b), "");
  SimParams p = defaultParams();
  p.force = ForceMode::Gravity;
  CpuEngine engine(p);
  engine.reset(b);
  EXPECT_EQ(engine.readBodies().species, (std::vector<Species>{0, 0}));
}

TEST(BodyFiles, AnEighthColumnIsTheSpeciesWhateverTheColumnLineSays) {
  // No column line, a seven-name column line, commas, a species written as a float: all species.
  for (const std::string& head : {std::string(), std::string("# mass x y z vx vy vz\n"),
                                  std::string("# murmuration state 1\n# bodies: 3\n# mass x y z vx vy vz species\n")}) {
    const Bodies b = readBodiesFile(writeText("eighth.txt", head + "1 0 0 0 0 0 0 3\n2,1,2,3,4,5,6,255\n1 0 0 0 0 0 0 7.0e0\n"));
    ASSERT_EQ(b.size(), 3u) << head;
    EXPECT_EQ(b.species, (std::vector<Species>{3, 255, 7})) << head;
    EXPECT_FLOAT_EQ(b.vel[1].z, 6.0f);
  }
}

TEST(BodyFiles, BadSpeciesAreRefusedNamingTheFileLineAndValue) {
  for (const char* bad : {"2.5", "-1", "256", "1e9", "x", "nan", "inf", "3abc"}) {
    const std::string path = writeText("bad_species.txt", "1 0 0 0 0 0 0 1\n# a comment\n1 1 0 0 0 0 0 " + std::string(bad) + "\n");
    EXPECT_EQ(errorOf(path), "--scenario file:" + path + ": line 3: species '" + bad +
                                 "' is not a whole number from 0 to 255 (the eighth column: mass x y z vx vy vz species)");
  }
  // A row whose column count is not the file's is refused, either way round.
  const std::string fewer = errorOf(writeText("fewer.txt", "1 0 0 0 0 0 0 1\n1 1 0 0 0 0 0\n"));
  EXPECT_NE(fewer.find("line 2: expected 8 numbers (mass x y z vx vy vz species) as on line 1, found 7"), std::string::npos)
      << fewer;
  const std::string more = errorOf(writeText("more.txt", "1 0 0 0 0 0 0\n\n1 1 0 0 0 0 0 4\n"));
  EXPECT_NE(more.find("line 3: expected 7 numbers (mass x y z vx vy vz) as on line 1, found 8"), std::string::npos) << more;
  // A row of separators alone holds no number: refused, first row or not (a fuzzed file once
  // loaded it as a body of uninitialised values).
  for (const char* text : {",,\n1 0 0 0 0 0 0\n", "1 0 0 0 0 0 0\n , \n"}) {
    const std::string none = errorOf(writeText("none.txt", text));
    EXPECT_NE(none.find("found 0"), std::string::npos) << text << ": " << none;
  }
}

// A state of species 0 throughout, whether its species array is empty or all zeros, is written in
// the seven columns it always had, byte for byte.
TEST(BodyFiles, SpeciesZeroThroughoutIsWrittenInSevenColumns) {
  Bodies b;
  b.resize(2);
  b.pos = {Vec4{1.5f, -2.0f, 0.25f, 3.0f}, Vec4{0.1f, 0.0f, -7.0f, 1.0f}};
  b.vel = {Vec4{0.5f, 0.0f, -1.0f, 0.0f}, Vec4{1e-3f, 2.0f, 3.0f, 0.0f}};
  b.id = {0, 1};
  const std::string want =
      "# murmuration state 1\n# bodies: 2\n# force: gravity\n# step: 9\n# mass x y z vx vy vz\n"
      "3 1.5 -2 0.25 0.5 0 -1\n1 0.100000001 0 -7 0.00100000005 2 3\n";
  StateHeader h;
  h.force = "gravity";
  h.step = 9;
  const std::string zeros = tempPath("zeros.txt"), none = tempPath("none.txt");
  writeBodiesFile(zeros, b, h);
  EXPECT_EQ(readText(zeros), want);
  b.species.clear();
  writeBodiesFile(none, b, h);
  EXPECT_EQ(readText(none), want);
  // One body of another species: the eighth column, for every body.
  b.species = {0, 9};
  writeBodiesFile(none, b, h);
  EXPECT_EQ(readText(none),
            "# murmuration state 1\n# bodies: 2\n# force: gravity\n# step: 9\n# mass x y z vx vy vz species\n"
            "3 1.5 -2 0.25 0.5 0 -1 0\n1 0.100000001 0 -7 0.00100000005 2 3 9\n");
  b.species = {1, 2, 3};
  EXPECT_THROW(writeBodiesFile(none, b, h), std::logic_error);
}

TEST(AtomicFiles, AbandonedWriteLeavesTheOldFileAndNoTemporary) {
  const std::string dir = ::testing::TempDir() + "murmur_atomic_" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/f.txt";
  writeFileAtomically("--out", path, "old\n");
  {
    AtomicFile f("--out", path);
    f.write(std::string(100000, 'x'));
  }  // no commit: as when the run throws half-way
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "old\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), {}), 1);
  if (std::filesystem::exists("/dev/full")) {
    AtomicFile full("--out", "/dev/full");
    full.write(std::string(100000, 'x'));
    EXPECT_THROW(full.commit(), WriteError);
  }
  EXPECT_THROW(checkWritable("--out", dir + "/missing/f.txt"), UsageError);
  EXPECT_THROW(checkWritable("--out", dir), UsageError);
  std::filesystem::remove_all(dir);
}
