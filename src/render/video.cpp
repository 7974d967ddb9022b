#include "render/video.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

namespace murmur::render {
namespace {

// Single-quoted for /bin/sh: popen runs a shell, and the path is user input.
std::string shellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// Writes to the pipe with SIGPIPE blocked on this thread, so that an ffmpeg that exits early makes
// the write fail with EPIPE instead of killing the whole program. The process-wide disposition of
// SIGPIPE is left alone.
bool writeAll(FILE* pipe, const uint8_t* data, size_t bytes) {
  sigset_t pipeSet, oldSet;
  sigemptyset(&pipeSet);
  sigaddset(&pipeSet, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipeSet, &oldSet);
  const bool ok = std::fwrite(data, 1, bytes, pipe) == bytes && std::fflush(pipe) == 0;
  if (!ok) {
    // Consume the SIGPIPE this write raised, if any, before unblocking.
    const timespec zero{0, 0};
    while (sigtimedwait(&pipeSet, nullptr, &zero) > 0) {
    }
  }
  pthread_sigmask(SIG_SETMASK, &oldSet, nullptr);
  return ok;
}

}  // namespace

bool VideoRecorder::ffmpegAvailable() {
  const char* path = std::getenv("PATH");
  if (!path) return false;
  std::string dirs(path);
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string dir = dirs.substr(start, end - start);
    if (dir.empty()) dir = ".";
    if (access((dir + "/ffmpeg").c_str(), X_OK) == 0) return true;
    start = end + 1;
  }
  return false;
}

VideoRecorder::VideoRecorder(const std::string& path, int width, int height, int fps)
    : path_(path), width_(width), height_(height), fps_(fps) {
  if (!ffmpegAvailable()) {
    throw std::runtime_error("--record: ffmpeg not found; install it with apt-get install ffmpeg");
  }
  if (width <= 0 || height <= 0 || fps <= 0) {
    throw std::runtime_error("--record: invalid video size " + std::to_string(width) + "x" +
                             std::to_string(height) + " at " + std::to_string(fps) + " fps");
  }
  // Frames arrive top row first, so no vflip. yuv420p (what players expect) needs even sizes:
  // pad by one pixel where the frame is odd.
  const std::string cmd = "ffmpeg -hide_banner -loglevel error -y -f rawvideo -pix_fmt rgba -s " +
                          std::to_string(width) + "x" + std::to_string(height) + " -r " +
                          std::to_string(fps) +
                          " -i - -vf 'pad=ceil(iw/2)*2:ceil(ih/2)*2' -pix_fmt yuv420p " +
                          shellQuote(path);
  pipe_ = popen(cmd.c_str(), "w");
  if (!pipe_) {
    throw std::runtime_error("--record: cannot start ffmpeg for " + path + ": " + std::strerror(errno));
  }
}

VideoRecorder::~VideoRecorder() {
  try {
    close();
  } catch (...) {
    // Destructors must not throw; close() reports the error to callers that ask.
  }
}

void VideoRecorder::addFrame(const std::vector<uint8_t>& rgba) {
  if (!pipe_) throw std::runtime_error("video " + path_ + ": recorder already closed");
  const size_t expected = static_cast<size_t>(width_) * static_cast<size_t>(height_) * 4;
  if (rgba.size() != expected) {
    throw std::runtime_error("video " + path_ + ": frame has " + std::to_string(rgba.size()) +
                             " bytes, expected " + std::to_string(expected) + " (" +
                             std::to_string(width_) + "x" + std::to_string(height_) + " RGBA)");
  }
  if (!writeAll(pipe_, rgba.data(), rgba.size())) {
    throw std::runtime_error("video " + path_ + ": ffmpeg stopped accepting frames after " +
                             std::to_string(frames_) + " (see its message above)");
  }
  ++frames_;
}

void VideoRecorder::close() {
  if (!pipe_) return;
  FILE* pipe = pipe_;
  pipe_ = nullptr;
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw std::runtime_error("video " + path_ + ": ffmpeg failed (exit status " +
                             std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                             "); the file may be incomplete");
  }
}

}  // namespace murmur::render
