#include "core/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "core/errors.h"

namespace murmur::core {

namespace {

std::string reason(int err) { return std::strerror(err); }

bool isDirectory(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// "dir/name.ext" -> "dir/name.tmp-XXXXXX.ext"; the suffix length for mkstemps.
std::string tempTemplate(const std::string& path, int* suffixLen) {
  const size_t slash = path.find_last_of('/');
  const size_t dot = path.find_last_of('.');
  const bool hasExt = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  const std::string stem = hasExt ? path.substr(0, dot) : path;
  const std::string ext = hasExt ? path.substr(dot) : std::string();
  *suffixLen = static_cast<int>(ext.size());
  return stem + ".tmp-XXXXXX" + ext;
}

// Creates the temporary; returns its descriptor and name, or throws UsageError naming the option.
int createTemp(const std::string& option, const std::string& path, std::string* name) {
  if (path.empty()) throw UsageError(option + " '' is invalid: expected a file name");
  if (isDirectory(path)) throw UsageError(option + " " + path + ": is a folder, expected a file name");
  int suffixLen = 0;
  std::string templ = tempTemplate(path, &suffixLen);
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  const int fd = ::mkstemps(buf.data(), suffixLen);
  if (fd < 0) throw UsageError(option + " " + path + ": cannot write (" + reason(errno) + ")");
  *name = buf.data();
  return fd;
}

// The mode a plain fopen(path, "w") would have given: the old file's, else 0666 less the umask.
mode_t targetMode(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) return st.st_mode & 07777;
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

}  // namespace

bool isSpecial(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
}

void checkWritable(const std::string& option, const std::string& path) {
  if (path.empty()) throw UsageError(option + " '' is invalid: expected a file name");
  if (isSpecial(path)) {
    if (::access(path.c_str(), W_OK) != 0) throw UsageError(option + " " + path + ": cannot write (" + reason(errno) + ")");
    return;
  }
  std::string tmp;
  const int fd = createTemp(option, path, &tmp);
  ::close(fd);
  ::unlink(tmp.c_str());
}

void checkDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  namespace fs = std::filesystem;
  struct Seen {
    const std::string* option;
    const std::string* path;
    fs::path key;
  };
  std::vector<Seen> seen;
  for (const auto& [option, path] : outputs) {
    if (path.empty() || isSpecial(path)) continue;
    std::error_code ec;
    fs::path key = fs::weakly_canonical(fs::absolute(path, ec), ec);
    if (ec) continue;  // checkWritable says what is wrong with it
    for (const Seen& s : seen) {
      std::error_code eq;
      if (s.key == key || fs::equivalent(s.key, key, eq))
        throw UsageError(option + " " + path + ": the same file as " + *s.option + " " + *s.path +
                         " (each output needs a file of its own)");
    }
    seen.push_back({&option, &path, std::move(key)});
  }
}

std::string makeTempSibling(const std::string& option, const std::string& path) {
  std::string tmp;
  const int fd = createTemp(option, path, &tmp);
  ::close(fd);
  return tmp;
}

void commitTempSibling(const std::string& option, const std::string& tmp, const std::string& path) {
  if (::chmod(tmp.c_str(), targetMode(path)) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw WriteError(option + " " + path + ": not written (" + reason(err) + ")");
  }
}

AtomicFile::AtomicFile(std::string option, std::string path) : option_(std::move(option)), path_(std::move(path)) {
  if (path_.empty()) throw UsageError(option_ + " '' is invalid: expected a file name");
  if (isSpecial(path_)) {
    f_ = std::fopen(path_.c_str(), "w");
    if (!f_) throw UsageError(option_ + " " + path_ + ": cannot write (" + reason(errno) + ")");
    return;
  }
  const int fd = createTemp(option_, path_, &tmp_);
  f_ = ::fdopen(fd, "w");
  if (!f_) {
    const int err = errno;
    ::close(fd);
    ::unlink(tmp_.c_str());
    throw UsageError(option_ + " " + path_ + ": cannot write (" + reason(err) + ")");
  }
}

AtomicFile::~AtomicFile() {
  if (f_) std::fclose(f_);
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
}

void AtomicFile::write(const void* data, size_t bytes) {
  if (errno_ != 0 || bytes == 0) return;
  errno = 0;
  if (std::fwrite(data, 1, bytes, f_) != bytes) errno_ = errno ? errno : EIO;
}

void AtomicFile::printf(const char* fmt, ...) {
  if (errno_ != 0) return;
  va_list args;
  va_start(args, fmt);
  errno = 0;
  const int r = std::vfprintf(f_, fmt, args);
  va_end(args);
  if (r < 0) errno_ = errno ? errno : EIO;
}

void AtomicFile::fail(const std::string& what, int err) {
  if (f_) std::fclose(f_);
  f_ = nullptr;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  throw WriteError(option_ + " " + path_ + ": " + what + " (" + reason(err) + ")");
}

void AtomicFile::commit() {
  if (!f_) throw WriteError(option_ + " " + path_ + ": already closed");
  if (errno_ != 0) fail("write failed, the file was not changed", errno_);
  errno = 0;
  if (std::fflush(f_) != 0 || std::ferror(f_)) fail("write failed, the file was not changed", errno ? errno : EIO);
  // A regular file is synced before the rename so that a crash cannot leave the new name on
  // unwritten blocks; devices and FIFOs have nothing to sync.
  if (!tmp_.empty() && ::fsync(::fileno(f_)) != 0) fail("write failed, the file was not changed", errno);
  FILE* f = f_;
  f_ = nullptr;
  if (std::fclose(f) != 0) {
    const int err = errno;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    throw WriteError(option_ + " " + path_ + ": close failed, the file was not changed (" + reason(err) + ")");
  }
  if (tmp_.empty()) return;
  const std::string tmp = tmp_;
  tmp_.clear();
  commitTempSibling(option_, tmp, path_);
}

void writeFileAtomically(const std::string& option, const std::string& path, const std::string& contents) {
  AtomicFile f(option, path);
  f.write(contents);
  f.commit();
}

}  // namespace murmur::core
