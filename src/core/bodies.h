// Host-side body state: the exchange format between scenarios, engines, files and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/hd.h"

namespace murmur::core {

struct Bodies {
  std::vector<Vec4> pos;     // xyz position, w = mass
  std::vector<Vec4> vel;     // xyz velocity, w unused (0)
  std::vector<uint32_t> id;  // stable identity; engines assign id = index at reset

  size_t size() const { return pos.size(); }
  void resize(size_t n) {
    pos.resize(n);
    vel.resize(n);
    id.resize(n);
  }
};

}  // namespace murmur::core
