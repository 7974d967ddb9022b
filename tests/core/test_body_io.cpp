#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

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
