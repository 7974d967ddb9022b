#include "render/video.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <stdexcept>
#include <vector>

#include "core/atomic_file.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace murmur::render {
namespace {

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
  // ffmpeg writes a temporary sibling with the same extension (it picks the container by it);
  // close() renames it over `path` only when ffmpeg succeeded, so a failed or abandoned
  // recording never replaces an older video with a broken one.
  tmp_ = core::makeTempSibling("--record", path);
  // Frames arrive top row first, so no vflip. yuv420p (what players expect) needs even sizes:
  // pad by one pixel where the frame is odd.
  const std::vector<std::string> args = {"ffmpeg", "-hide_banner", "-loglevel", "error", "-y", "-f", "rawvideo",
                                         "-pix_fmt", "rgba", "-s", std::to_string(width) + "x" + std::to_string(height),
                                         "-r", std::to_string(fps), "-i", "-", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2",
                                         "-pix_fmt", "yuv420p", tmp_};
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    const int err = errno;
    ::unlink(tmp_.c_str());
    throw std::runtime_error("--record: cannot start ffmpeg for " + path + ": " + std::strerror(err));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  // Its own process group: a Ctrl-C at the terminal goes to murmur alone, which then finishes
  // the step, closes the stream and lets ffmpeg write the trailer (see app/stop_signal.h).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const int rc = posix_spawnp(&pid_, "ffmpeg", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    ::unlink(tmp_.c_str());
    throw std::runtime_error("--record: cannot start ffmpeg for " + path + ": " + std::strerror(rc));
  }
  pipe_ = ::fdopen(fds[1], "w");
  if (!pipe_) {
    ::close(fds[1]);
    ::waitpid(pid_, nullptr, 0);
    ::unlink(tmp_.c_str());
    throw std::runtime_error("--record: cannot start ffmpeg for " + path);
  }
}

VideoRecorder::~VideoRecorder() {
  // Not closed: the recording is abandoned (an error elsewhere); the old file stays.
  if (!pipe_) return;
  std::fclose(pipe_);
  pipe_ = nullptr;
  ::waitpid(pid_, nullptr, 0);
  ::unlink(tmp_.c_str());
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
  std::fclose(pipe);  // EOF: ffmpeg writes the trailer and exits
  int status = 0;
  pid_t r;
  while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
  }
  if (r < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    ::unlink(tmp_.c_str());
    throw core::WriteError("--record " + path_ + ": ffmpeg failed (exit status " +
                           std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : status) +
                           "); the file was not written");
  }
  core::commitTempSibling("--record", tmp_, path_);
}

}  // namespace murmur::render
