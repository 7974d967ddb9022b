// Text body files: one body per line, "mass x y z vx vy vz", '#' starts a comment.
#pragma once

#include <string>

#include "core/bodies.h"

namespace murmur::core {

// Throws UsageError naming the file (and the line number for a malformed line).
Bodies readBodiesFile(const std::string& path);

// Writes bodies in id order with full float precision (round-trips exactly through readBodiesFile).
// Throws UsageError when the file cannot be written.
void writeBodiesFile(const std::string& path, const Bodies& bodies);

}  // namespace murmur::core
