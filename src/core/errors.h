// Error types. Library code throws; only main catches and decides the exit status.
#pragma once

#include <stdexcept>
#include <string>

namespace murmur::core {

// Bad input from the user: an option value, a file, a size that does not fit the machine.
// main prints what() on one line and exits with status 2.
class UsageError : public std::runtime_error {
 public:
  explicit UsageError(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace murmur::core
