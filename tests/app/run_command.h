// Runs a shell command for the app tests and captures its exit status and output.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace murmur::test {

// The murmur executable the CLI tests run and their data folder: $MURMUR_EXE and
// $MURMUR_TEST_DATA where set ($MURMUR_PLOT_SCRIPT for bench/plot.py) (test binaries run on another machine than the one that built
// them, e.g. a GPU machine), else the build's own.
inline std::string fromEnvOr(const char* name, const char* built) {
  const char* v = std::getenv(name);
  return v && *v ? std::string(v) : std::string(built);
}
inline std::string murmurExe() { return fromEnvOr("MURMUR_EXE", MURMUR_EXE); }
inline std::string testDataDir() { return fromEnvOr("MURMUR_TEST_DATA", MURMUR_TEST_DATA); }

struct Result {
  int status = -1;
  std::string out;  // stdout + stderr
};

inline Result runCommand(const std::string& cmd) {
  Result r;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  while (fgets(buf.data(), buf.size(), p)) r.out += buf.data();
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

inline int lineCount(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

}  // namespace murmur::test
