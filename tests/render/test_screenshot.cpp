#include "render/screenshot.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include <unistd.h>

namespace murmur::render {
namespace {

namespace fs = std::filesystem;

uint32_t bigEndian32(const std::vector<uint8_t>& b, size_t at) {
  return (uint32_t{b[at]} << 24) | (uint32_t{b[at + 1]} << 16) | (uint32_t{b[at + 2]} << 8) | uint32_t{b[at + 3]};
}

TEST(Screenshot, WritesAValidPngOfTheRequestedSize) {
  const int w = 37, h = 23;  // odd sizes catch row-stride mistakes
  std::vector<uint8_t> rgba(static_cast<size_t>(w) * h * 4);
  for (size_t i = 0; i < rgba.size(); ++i) rgba[i] = static_cast<uint8_t>(i * 7);
  const fs::path path = fs::temp_directory_path() / ("murmur_screenshot_test_" + std::to_string(getpid()) + ".png");
  writePng(path.string(), w, h, rgba);

  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << path;
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove(path);
  ASSERT_GE(bytes.size(), 33u);
  const uint8_t signature[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(bytes[static_cast<size_t>(i)], signature[i]) << "signature byte " << i;
  // The first chunk is IHDR: length 13, type, width, height, bit depth 8, colour type 6 (RGBA).
  EXPECT_EQ(bigEndian32(bytes, 8), 13u);
  EXPECT_EQ(std::string(bytes.begin() + 12, bytes.begin() + 16), "IHDR");
  EXPECT_EQ(bigEndian32(bytes, 16), static_cast<uint32_t>(w));
  EXPECT_EQ(bigEndian32(bytes, 20), static_cast<uint32_t>(h));
  EXPECT_EQ(bytes[24], 8);
  EXPECT_EQ(bytes[25], 6);
  // And it ends with IEND.
  EXPECT_EQ(std::string(bytes.end() - 8, bytes.end() - 4), "IEND");
}

TEST(Screenshot, UnwritablePathNamesThePath) {
  const std::string path = "/nonexistent-murmur-dir/shot.png";
  try {
    writePng(path, 2, 2, std::vector<uint8_t>(16, 0));
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
  }
}

TEST(Screenshot, SizeMismatchThrows) {
  EXPECT_THROW(writePng("unused.png", 4, 4, std::vector<uint8_t>(10, 0)), std::runtime_error);
}

}  // namespace
}  // namespace murmur::render
