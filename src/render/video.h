// Video capture: raw RGBA frames piped into an ffmpeg process, which encodes them (H.264 in an .mp4
// by default; the container follows the file name's extension). ffmpeg is optional: without it the
// rest of Murmuration works, and recording says how to get it.
#pragma once
#include "render/module_guard.h"

#include <cstdint>
#include <sys/types.h>

#include <cstdio>
#include <string>
#include <vector>

namespace murmur::render {

class VideoRecorder {
 public:
  // True when an executable `ffmpeg` is on the PATH.
  static bool ffmpegAvailable();

  // Starts ffmpeg writing `path` (overwritten if it exists) at `fps` frames per second from frames
  // of width x height. Throws std::runtime_error when ffmpeg is not installed (the message says how
  // to install it), when the size or rate is invalid, or when the process cannot start.
  VideoRecorder(const std::string& path, int width, int height, int fps);
  // Without close(): stops ffmpeg and removes its temporary; `path` is left as it was.
  ~VideoRecorder();
  VideoRecorder(const VideoRecorder&) = delete;
  VideoRecorder& operator=(const VideoRecorder&) = delete;

  // Appends one frame: width * height RGBA8 pixels, top row first (Renderer::readPixels).
  // Throws std::runtime_error when the size is wrong or ffmpeg has stopped reading.
  void addFrame(const std::vector<uint8_t>& rgba);
  // Ends the stream, waits for ffmpeg and puts the file in place. Throws core::WriteError if
  // ffmpeg failed (the old file, if any, stays). Idempotent.
  void close();

  const std::string& path() const { return path_; }
  int width() const { return width_; }
  int height() const { return height_; }
  int fps() const { return fps_; }
  long framesWritten() const { return frames_; }

 private:
  std::string path_;
  int width_, height_, fps_;
  std::string tmp_;  // what ffmpeg writes; renamed to path_ by close()
  FILE* pipe_ = nullptr;
  pid_t pid_ = -1;
  long frames_ = 0;
};

}  // namespace murmur::render
