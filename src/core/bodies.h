// Host-side body state: the exchange format between scenarios, engines, files and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/hd.h"

namespace murmur::core {

struct Bodies {
  std::vector<Vec4> pos;     // xyz position, w = mass
  std::vector<Vec4> vel;     // xyz velocity, w unused (0)
  // Stable identity, a permutation of 0..N-1 (scenarios and files number the bodies in order).
  // Engines keep the ids they are given and carry them through every reorder, so that colour by
  // id, tests and output follow a body wherever the coherent pipeline moves it.
  std::vector<uint32_t> id;
  size_t size() const { return pos.size(); }
  void resize(size_t n) {
    pos.resize(n);
    vel.resize(n);
    id.resize(n);
  }
};

// Empty when pos, vel and id have one size and id is a permutation of 0..N-1 (and, for a 2D
// world, dims 2, every body has z = 0 and vz = 0); otherwise why not.
std::string checkBodies(const Bodies& b, int dims = 3);
// The 2D part of checkBodies alone: empty unless dims is 2 and a body has z or vz other than 0.
std::string checkPlane(const Bodies& b, int dims);

// The mass every body has when all have exactly the same positive mass (pos[i].w), else 0. Masses
// never change during a run, so an engine asks once per reset; all-pairs gravity then leaves the
// mass out of the pair. Empty input: 0.
float commonMass(const std::vector<Vec4>& pos);

// The state held in engine order (cell order for the coherent pipeline), rearranged so that
// result.id[i] == i. Throws std::logic_error when an id is out of range (a corrupt state).
Bodies bodiesInIdOrder(const std::vector<Vec4>& pos, const std::vector<Vec4>& vel, const std::vector<uint32_t>& id);

// values[k] belongs to the body id[k]; returns them indexed by id.
std::vector<Vec4> inIdOrder(const std::vector<Vec4>& values, const std::vector<uint32_t>& id);

}  // namespace murmur::core
