// Host-side body state: the exchange format between scenarios, engines, files and tests.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/hd.h"

namespace murmur::core {

// The attributes a body carries, declared once (docs/design.md#bodies-and-their-attributes).
// BodyArrays<A> holds one array A<T> per attribute: std::vector on the host (Bodies), a device
// pointer in kernels (cuda/body_arrays.cuh). Every path that moves bodies (sort and reorder, id
// order, the stores over ranks, state files, trajectories, the renderer's inputs, Python) goes
// through forEach instead of naming the arrays, so an attribute added here travels everywhere;
// the physics reads position and velocity by name.
//   pos      xyz position, w = mass
//   vel      xyz velocity, w unused (0)
//   id       stable identity, a permutation of 0..N-1 (scenarios and files number the bodies in
//            order). Engines keep the ids they are given and carry them through every reorder, so
//            that colour by id, tests, output and a body's random draws (core/random.h) follow a
//            body wherever a pipeline moves it.
//   species  a small integer, 0 by default (kSpeciesCount values). Optional on the way in: an
//            empty species array means every body is species 0 (withDefaults).
inline constexpr int kSpeciesCount = 256;
using Species = uint8_t;

inline constexpr int kAttributeCount = 4;  // the members below: code that cannot iterate asserts it

template <template <typename> class A>
struct BodyArrays {
  A<Vec4> pos;
  A<Vec4> vel;
  A<uint32_t> id;
  A<Species> species;

  // f(name, array) for every attribute, in the order above.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <typename F>
  MURMUR_HD void forEach(F&& f) {
    f("pos", pos), f("vel", vel), f("id", id), f("species", species);
  }
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <typename F>
  MURMUR_HD void forEach(F&& f) const {
    f("pos", pos), f("vel", vel), f("id", id), f("species", species);
  }
  // f(name, this's array, o's array) for every attribute: o is a BodyArrays of any storage.
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <typename O, typename F>
  MURMUR_HD void forEachWith(O&& o, F&& f) {
    f("pos", pos, o.pos), f("vel", vel, o.vel), f("id", id, o.id), f("species", species, o.species);
  }
#if defined(__CUDACC__)
#pragma nv_exec_check_disable
#endif
  template <typename O, typename F>
  MURMUR_HD void forEachWith(O&& o, F&& f) const {
    f("pos", pos, o.pos), f("vel", vel, o.vel), f("id", id, o.id), f("species", species, o.species);
  }
};

template <typename T>
using HostArray = std::vector<T>;

struct Bodies : BodyArrays<HostArray> {
  size_t size() const { return pos.size(); }
  void resize(size_t n) {
    forEach([&](const char*, auto& a) { a.resize(n); });
  }
};

// The arrays as raw pointers, for kernels and device buffers (cuda/device_utils.cuh moveBody).
template <typename T>
using Pointer = T*;
template <typename T>
using ConstPointer = const T*;
using BodyPointers = BodyArrays<Pointer>;
using ConstBodyPointers = BodyArrays<ConstPointer>;
MURMUR_HD ConstBodyPointers readOnly(const BodyPointers& p) { return ConstBodyPointers{p.pos, p.vel, p.id, p.species}; }

// An attribute array of `b` that is optional on the way in and empty gets its default value for
// every body (species 0): what engines do on reset, so that a state built without species is one
// of species 0 throughout.
void withDefaults(Bodies& b);

// The bodies src.x[index[k]] for k = 0..index.size()-1, every attribute: a reorder into sorted
// order, or a selection. Throws std::logic_error when an index is out of range.
Bodies gatherBodies(const Bodies& src, const std::vector<uint32_t>& index);
// The same into dst (resized), reusing its storage: the CPU engine's reorder, whose sorted index
// is a permutation by construction (no range check on this path).
void gatherBodiesInto(const Bodies& src, const uint32_t* index, size_t count, Bodies& dst);

// Empty when pos, vel and id have one size, species that size or none (withDefaults), id is a
// permutation of 0..N-1 (and, for a 2D world, dims 2, every body has z = 0 and vz = 0); otherwise
// why not.
std::string checkBodies(const Bodies& b, int dims = 3);
// The 2D part of checkBodies alone: empty unless dims is 2 and a body has z or vz other than 0.
std::string checkPlane(const Bodies& b, int dims);

// The mass every body has when all have exactly the same positive mass (pos[i].w), else 0. Masses
// never change during a run, so an engine asks once per reset; all-pairs gravity then leaves the
// mass out of the pair. Empty input: 0.
float commonMass(const std::vector<Vec4>& pos);

// The state held in engine order (cell order for the coherent pipeline), rearranged so that
// result.id[i] == i, every attribute. Throws std::logic_error when an id is out of range (a
// corrupt state).
Bodies bodiesInIdOrder(const Bodies& current);

// values[k] belongs to the body id[k]; returns them indexed by id.
std::vector<Vec4> inIdOrder(const std::vector<Vec4>& values, const std::vector<uint32_t>& id);

}  // namespace murmur::core
