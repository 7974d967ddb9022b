// Output files that are either complete or untouched. Every file the program writes (--out,
// --csv, --screenshot, --record, the bench sidecar) goes through here: the bytes go to a
// temporary file next to the target, every write and the close are checked, and only then is the
// temporary renamed over the target. A full disk, a signal or a crash leaves the old file as it
// was (and at worst a stray temporary), never a truncated one reported as written.
//
// Targets that are not regular files (/dev/stdout, /dev/full, a FIFO) cannot be replaced by a
// rename; they are written in place, still with every write checked.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace murmur::core {

// A write that failed after the run (disk full, I/O error): not the user's input, so main exits
// with status 1. The message names the option, the file and the system's reason.
class WriteError : public std::runtime_error {
 public:
  explicit WriteError(const std::string& what) : std::runtime_error(what) {}
};

// True when path exists and is something a rename must not replace (a device, a FIFO, a socket):
// such targets are written in place (/dev/stdout).
bool isSpecial(const std::string& path);

// Throws UsageError (exit 2) when `path` cannot be written: its folder is missing or read-only,
// or it names a folder. Creates and removes a probe file, so call it before a long run rather
// than finding out at its end. `option` is how the user named the file ("--out").
void checkWritable(const std::string& option, const std::string& path);

// Throws UsageError (exit 2) when two of the outputs (option as the user named it, path) are one
// file, by name or through links: the later one would silently replace the other. Empty paths
// and special files (/dev/null, /dev/stdout) are skipped.
void checkDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& outputs);

// A temporary sibling of `path` with the same extension, for writers that need a file name
// rather than a FILE* (ffmpeg chooses its container by the extension). Created empty (mode 0600
// until committed); throws like checkWritable.
std::string makeTempSibling(const std::string& option, const std::string& path);

// Gives `tmp` the permissions a new file would get and renames it over `path`; removes tmp and
// throws WriteError on failure.
void commitTempSibling(const std::string& option, const std::string& tmp, const std::string& path);

class AtomicFile {
 public:
  // Opens the temporary (or the special file itself). Throws like checkWritable.
  AtomicFile(std::string option, std::string path);
  ~AtomicFile();  // removes the temporary unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Buffered writes; failures are remembered and reported by commit().
  void write(const void* data, size_t bytes);
  void write(const std::string& s) { write(s.data(), s.size()); }
  void printf(const char* fmt, ...) __attribute__((format(printf, 2, 3)));

  // Flushes, syncs, closes and renames; throws WriteError naming the file and the reason.
  void commit();

 private:
  [[noreturn]] void fail(const std::string& what, int err);
  std::string option_, path_, tmp_;  // tmp_ empty when writing a special file in place
  FILE* f_ = nullptr;
  int errno_ = 0;  // first failed write's errno
};

// The whole file in one call.
void writeFileAtomically(const std::string& option, const std::string& path, const std::string& contents);

}  // namespace murmur::core
