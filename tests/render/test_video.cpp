#include "render/video.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

namespace murmur::render {
namespace {

namespace fs = std::filesystem;

// Restores PATH when it goes out of scope.
class PathOverride {
 public:
  explicit PathOverride(const char* value) {
    const char* old = std::getenv("PATH");
    had_ = old != nullptr;
    if (had_) old_ = old;
    setenv("PATH", value, 1);
  }
  ~PathOverride() {
    if (had_) {
      setenv("PATH", old_.c_str(), 1);
    } else {
      unsetenv("PATH");
    }
  }

 private:
  bool had_ = false;
  std::string old_;
};

TEST(Video, MissingFfmpegSaysHowToInstallIt) {
  PathOverride path("/nonexistent-murmur-dir");
  EXPECT_FALSE(VideoRecorder::ffmpegAvailable());
  try {
    VideoRecorder rec("unused.mp4", 64, 48, 30);
    FAIL() << "expected std::runtime_error";
  } catch (const std::runtime_error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("ffmpeg not found"), std::string::npos) << msg;
    EXPECT_NE(msg.find("apt-get install ffmpeg"), std::string::npos) << msg;
  }
}

// A stand-in ffmpeg on the PATH: tests the pipe and the error paths without the real encoder.
class FakeFfmpeg {
 public:
  explicit FakeFfmpeg(const std::string& script)
      : dir_(fs::temp_directory_path() / ("murmur_fake_ffmpeg_" + std::to_string(getpid()))) {
    fs::create_directories(dir_);
    const fs::path exe = dir_ / "ffmpeg";
    std::ofstream(exe) << "#!/bin/sh\n" << script << "\n";
    fs::permissions(exe, fs::perms::owner_all);
    path_.emplace(dir_.string().c_str());
  }
  ~FakeFfmpeg() { fs::remove_all(dir_); }
  const fs::path& dir() const { return dir_; }

 private:
  fs::path dir_;
  std::optional<PathOverride> path_;
};

TEST(Video, PipesRawFramesToFfmpeg) {
  // Copies stdin to the last argument (the output path), as an encoder that stores raw frames.
  // Only the fake is on the PATH, hence /bin/cat.
  FakeFfmpeg fake("for a in \"$@\"; do out=\"$a\"; done; /bin/cat > \"$out\"");
  ASSERT_TRUE(VideoRecorder::ffmpegAvailable());
  const fs::path out = fake.dir() / "clip with space.mp4";
  VideoRecorder rec(out.string(), 5, 3, 24);
  const std::vector<uint8_t> frame(5 * 3 * 4, 7);
  for (int i = 0; i < 4; ++i) rec.addFrame(frame);
  rec.close();
  EXPECT_EQ(rec.framesWritten(), 4);
  EXPECT_EQ(fs::file_size(out), 4u * frame.size());
}

TEST(Video, FfmpegThatFailsIsReportedNotFatal) {
  // Exits at once: writes then fail with EPIPE, which must become an exception, not a SIGPIPE
  // that kills the process.
  FakeFfmpeg fake("exit 3");
  VideoRecorder rec((fake.dir() / "x.mp4").string(), 256, 256, 30);
  const std::vector<uint8_t> frame(256 * 256 * 4, 1);
  bool threw = false;
  try {
    for (int i = 0; i < 64; ++i) rec.addFrame(frame);  // 16 MiB: far more than a pipe buffers
    rec.close();
  } catch (const std::runtime_error& e) {
    threw = true;
    EXPECT_NE(std::string(e.what()).find("ffmpeg"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(threw);
}

TEST(Video, RecordsFramesWhenFfmpegIsInstalled) {
  if (!VideoRecorder::ffmpegAvailable()) GTEST_SKIP() << "ffmpeg is not installed";
  const fs::path out = fs::temp_directory_path() / ("murmur_video_test_" + std::to_string(getpid()) + ".mp4");
  {
    VideoRecorder rec(out.string(), 65, 47, 10);  // odd size: padded to even for yuv420p
    std::vector<uint8_t> frame(65 * 47 * 4, 0);
    for (int i = 0; i < 5; ++i) {
      std::fill(frame.begin(), frame.end(), static_cast<uint8_t>(40 * i));
      rec.addFrame(frame);
    }
    EXPECT_THROW(rec.addFrame(std::vector<uint8_t>(10)), std::runtime_error);
    rec.close();
    EXPECT_EQ(rec.framesWritten(), 5);
  }
  EXPECT_GT(fs::file_size(out), 0u);
  fs::remove(out);
}

}  // namespace
}  // namespace murmur::render
