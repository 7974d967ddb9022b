#include "core/bodies.h"

#include <stdexcept>

namespace murmur::core {

std::string checkPlane(const Bodies& b, int dims) {
  if (dims == 2)
    for (size_t k = 0; k < b.pos.size() && k < b.vel.size() && k < b.id.size(); ++k)
      if (b.pos[k].z != 0.0f || b.vel[k].z != 0.0f)
        return "body " + std::to_string(b.id[k]) + " has z = " + std::to_string(b.pos[k].z) + ", vz = " +
               std::to_string(b.vel[k].z) + " (a 2D world, dims 2, needs z = 0 and vz = 0)";
  return {};
}

std::string checkBodies(const Bodies& b, int dims) {
  const size_t n = b.pos.size();
  if (b.vel.size() != n || b.id.size() != n) return "pos, vel and id sizes differ";
  if (!b.species.empty() && b.species.size() != n)
    return "species has " + std::to_string(b.species.size()) + " entries for " + std::to_string(n) +
           " bodies (one per body, or none for species 0)";
  const std::string plane = checkPlane(b, dims);
  if (!plane.empty()) return plane;
  std::vector<bool> seen(n, false);
  for (uint32_t id : b.id) {
    if (id >= n || seen[id]) return "ids are not a permutation of 0..N-1 (id " + std::to_string(id) + ")";
    seen[id] = true;
  }
  return {};
}

float commonMass(const std::vector<Vec4>& pos) {
  if (pos.empty() || !(pos[0].w > 0.0f)) return 0.0f;
  for (const Vec4& p : pos)
    if (p.w != pos[0].w) return 0.0f;
  return pos[0].w;
}

std::vector<Vec4> inIdOrder(const std::vector<Vec4>& values, const std::vector<uint32_t>& id) {
  std::vector<Vec4> out(values.size());
  for (size_t k = 0; k < values.size(); ++k) {
    if (id[k] >= values.size()) throw std::logic_error("body id out of range (corrupt engine state)");
    out[id[k]] = values[k];
  }
  return out;
}

void withDefaults(Bodies& b) {
  if (b.species.empty()) b.species.assign(b.size(), Species{0});
}

void gatherBodiesInto(const Bodies& src, const uint32_t* index, size_t count, Bodies& dst) {
  const size_t n = src.size();
  src.forEachWith(dst, [&](const char*, const auto& in, auto& out) {
    out.resize(count);
    if (in.size() != n) throw std::logic_error("gatherBodies: attribute sizes differ");
    const long m = static_cast<long>(count);
#pragma omp parallel for schedule(static)
    for (long k = 0; k < m; ++k) out[static_cast<size_t>(k)] = in[index[k]];
  });
}

Bodies gatherBodies(const Bodies& src, const std::vector<uint32_t>& index) {
  for (uint32_t k : index)
    if (k >= src.size()) throw std::logic_error("gatherBodies: index " + std::to_string(k) + " of " + std::to_string(src.size()));
  Bodies out;
  gatherBodiesInto(src, index.data(), index.size(), out);
  return out;
}

Bodies bodiesInIdOrder(const Bodies& current) {
  const size_t n = current.size();
  std::vector<uint32_t> where(n);
  for (size_t k = 0; k < n; ++k) {
    if (current.id[k] >= n) throw std::logic_error("body id out of range (corrupt engine state)");
    where[current.id[k]] = static_cast<uint32_t>(k);
  }
  return gatherBodies(current, where);
}

}  // namespace murmur::core
