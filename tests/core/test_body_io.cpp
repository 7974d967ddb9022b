#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/atomic_file.h"
#include "core/body_io.h"
#include "core/errors.h"
#include "core/metrics.h"
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
  EXPECT_NE(errorOf(writeText("eight.txt", "1 0 0 0 0 0 0 0\n")).find("found 8"), std::string::npos);
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
