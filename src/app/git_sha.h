// The source revision the binary was built from, for the git_sha column of every CSV row and the
// JSON sidecar: the short commit, "+dirty" when tracked files differed from it, "unknown" outside
// a git checkout. Taken at build time (cmake/git_sha.cmake), not when CMake configured.
#pragma once

namespace murmur::app {

const char* gitSha();

}  // namespace murmur::app
