// The Barnes-Hut tree of the `tree` gravity pipeline: the parts that the CPU engine and the CUDA
// kernels share (host/device inline), and the CPU executor of its stages.
//
// Construction (Karras 2012, "Maximizing parallelism in the construction of BVHs, octrees and
// k-d trees"): bodies get a 63-bit Morton key (21 bits per axis) inside their bounding cube and
// are sorted by it; then every internal node of the binary radix tree over the sorted keys is
// found independently from the keys alone (buildRadixNode). Each node covers a contiguous range
// of sorted bodies. Every octree cell whose bodies do not all sit in one of its eight sub-cells
// is one of these nodes; the nodes in between split a cell in halves or quarters along the
// key's bit order. Walking the binary tree visits the octree's cells and these parts of cells.
// Ties (equal keys) split by sorted position, so bodies at one point still give a valid tree.
//
// Moments are summed bottom-up (combineChildren): mass, centre of mass, the traceless
// quadrupole about the centre of mass, and the tight bounding box, from which the node's
// opening radius follows.
//
// The walk is shared by a group of at most kTreeGroupSize bodies (one CUDA warp): the bodies of
// a largest subtree of at most that many bodies, so consecutive along the curve and compact in
// space. The group opens a node when the node's opening sphere reaches the group's bounding box,
// so every lane of the warp takes the same branch and reads the same node. (Fixed chunks of 32
// sorted bodies are not enough: a chunk that straddles two far-apart subtrees gets a box that
// holds the whole core, and that one warp then sums most of the bodies directly.)
#pragma once

#include <cstdint>
#include <vector>

#include "core/hd.h"

namespace murmur::core {

// Bits per axis of the Morton key: 3 x 21 = 63 bits.
constexpr int kMortonBitsPerAxis = 21;
constexpr uint32_t kMortonCells = 1u << kMortonBitsPerAxis;
// Child links: internal node index, or a body (sorted position) with this bit set.
constexpr uint32_t kTreeLeafBit = 0x80000000u;
constexpr uint32_t kTreeNoParent = 0xffffffffu;
// Bodies that share one walk; equal to the CUDA warp size so that a warp is a group.
constexpr int kTreeGroupSize = 32;
// The walk's stack depth. Going down the radix tree, the common prefix length grows strictly
// and is at most 63 key bits + 32 position bits, so no path is deeper than 96 nodes and the
// depth-first stack never holds more than 97 entries.
constexpr int kTreeStackSize = 128;

// Children and the sorted range [first, last] of one internal node.
struct alignas(16) TreeLinks {
  uint32_t left, right, first, last;
};

// Moments of a node (or of one body) while the tree is summed bottom-up.
struct TreeMoments {
  Vec4 com;    // centre of mass xyz, w = mass
  Vec4 quad0;  // traceless quadrupole about com: Qxx, Qyy, Qzz, Qxy (Q = sum m (3 d d^T - |d|^2 I))
  Vec4 quad1;  // Qxz, Qyz, squared opening radius, 0
  Vec4 boxMin, boxMax;  // tight bounding box of the node's bodies (w unused)
};

MURMUR_HD int clz64(uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return x == 0 ? 64 : __builtin_clzll(x);
#endif
}
MURMUR_HD int clz32(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(x));
#else
  return x == 0 ? 32 : __builtin_clz(x);
#endif
}

// Spreads the low 21 bits of v so that two zero bits follow each.
MURMUR_HD uint64_t spreadBits3(uint32_t v) {
  uint64_t x = v & 0x1fffffu;
  x = (x | (x << 32)) & 0x1f00000000ffffull;
  x = (x | (x << 16)) & 0x1f0000ff0000ffull;
  x = (x | (x << 8)) & 0x100f00f00f00f00full;
  x = (x | (x << 4)) & 0x10c30c30c30c30c3ull;
  x = (x | (x << 2)) & 0x1249249249249249ull;
  return x;
}

// Cells per unit length of the bounding cube of [lo, hi]: a cube (not the box) so that the
// prefixes of the key are octree cells. 0 when all bodies sit at one point.
MURMUR_HD float mortonScale(const Vec4& lo, const Vec4& hi) {
  float ext = hi.x - lo.x;
  ext = fmaxf(ext, hi.y - lo.y);
  ext = fmaxf(ext, hi.z - lo.z);
  return ext > 0.0f ? static_cast<float>(kMortonCells) / ext : 0.0f;
}

MURMUR_HD uint32_t mortonAxis(float p, float lo, float scale) {
  const float c = mulRn(p - lo, scale);
  if (!(c > 0.0f)) return 0;  // also NaN
  const float top = static_cast<float>(kMortonCells - 1);
  return c >= top ? kMortonCells - 1 : static_cast<uint32_t>(c);
}

MURMUR_HD uint64_t mortonKey(const Vec4& p, const Vec4& lo, float scale) {
  return (spreadBits3(mortonAxis(p.x, lo.x, scale)) << 2) | (spreadBits3(mortonAxis(p.y, lo.y, scale)) << 1) |
         spreadBits3(mortonAxis(p.z, lo.z, scale));
}

// Length of the common prefix of sorted keys i and j, -1 outside [0, n). Equal keys compare
// their positions instead, which makes every key distinct (Karras 2012, section 4).
MURMUR_HD int keyPrefix(const uint64_t* keys, int n, int i, int j) {
  if (j < 0 || j >= n) return -1;
  const uint64_t a = keys[i], b = keys[j];
  if (a == b) return 64 + clz32(static_cast<uint32_t>(i ^ j));
  return clz64(a ^ b);
}

// Internal node i (0 <= i < n - 1; node 0 is the root) of the radix tree over n >= 2 sorted
// keys: its range is found by a search outward from i, its split by a binary search inside.
MURMUR_HD TreeLinks buildRadixNode(const uint64_t* keys, int n, int i) {
  const int d = keyPrefix(keys, n, i, i + 1) > keyPrefix(keys, n, i, i - 1) ? 1 : -1;
  const int minPrefix = keyPrefix(keys, n, i, i - d);
  int lmax = 2;
  while (keyPrefix(keys, n, i, i + lmax * d) > minPrefix) lmax *= 2;
  int l = 0;
  for (int t = lmax / 2; t >= 1; t /= 2)
    if (keyPrefix(keys, n, i, i + (l + t) * d) > minPrefix) l += t;
  const int j = i + l * d;
  const int nodePrefix = keyPrefix(keys, n, i, j);
  int s = 0;
  for (int div = 2;; div *= 2) {
    const int t = (l + div - 1) / div;
    if (keyPrefix(keys, n, i, i + (s + t) * d) > nodePrefix) s += t;
    if (t <= 1) break;
  }
  const int split = i + s * d + (d < 0 ? -1 : 0);
  const int first = i < j ? i : j;
  const int last = i < j ? j : i;
  TreeLinks k;
  k.left = first == split ? (static_cast<uint32_t>(split) | kTreeLeafBit) : static_cast<uint32_t>(split);
  k.right = last == split + 1 ? (static_cast<uint32_t>(split + 1) | kTreeLeafBit) : static_cast<uint32_t>(split + 1);
  k.first = static_cast<uint32_t>(first);
  k.last = static_cast<uint32_t>(last);
  return k;
}

// Group starts from internal node k: a child of at most kTreeGroupSize bodies under a larger
// node roots a group (its first body is flagged). The left child covers [first, split], the
// right [split + 1, last], whether leaves or nodes. When n <= kTreeGroupSize the root is the
// only group (the caller flags body 0).
MURMUR_HD void markGroupStarts(const TreeLinks& k, uint32_t* flags) {
  const uint32_t size = kTreeGroupSize;
  if (k.last - k.first + 1 <= size) return;
  const uint32_t split = k.left & ~kTreeLeafBit;
  if (split - k.first + 1 <= size) flags[k.first] = 1;
  if (k.last - split <= size) flags[split + 1] = 1;
}

MURMUR_HD TreeMoments bodyMoments(const Vec4& p) {
  TreeMoments m;
  m.com = p;
  m.quad0 = Vec4{0, 0, 0, 0};
  m.quad1 = Vec4{0, 0, 0, 0};
  m.boxMin = p;
  m.boxMax = p;
  return m;
}

// Adds child c's quadrupole, moved from its centre of mass to `com` (parallel-axis theorem for
// the traceless tensor), into q0/q1.
MURMUR_HD void addShiftedQuadrupole(const TreeMoments& c, const Vec3& com, Vec4& q0, Vec4& q1) {
  const float m = c.com.w;
  const Vec3 d = xyz(c.com) - com;
  const float d2 = d.x * d.x + d.y * d.y + d.z * d.z;
  q0.x += c.quad0.x + m * (3.0f * d.x * d.x - d2);
  q0.y += c.quad0.y + m * (3.0f * d.y * d.y - d2);
  q0.z += c.quad0.z + m * (3.0f * d.z * d.z - d2);
  q0.w += c.quad0.w + m * (3.0f * d.x * d.y);
  q1.x += c.quad1.x + m * (3.0f * d.x * d.z);
  q1.y += c.quad1.y + m * (3.0f * d.y * d.z);
}

// A node from its two children. The opening radius is l / theta + delta (l: the longest side of
// the node's box, delta: the offset of the centre of mass from the box centre; Barnes 1994 and
// Bonsai's criterion), stored squared. With theta <= 1 the radius covers the whole box, so a
// group that overlaps a node always opens it and never meets its own bodies as a multipole.
MURMUR_HD TreeMoments combineChildren(const TreeMoments& a, const TreeMoments& b, float theta) {
  TreeMoments r;
  r.boxMin = Vec4{fminf(a.boxMin.x, b.boxMin.x), fminf(a.boxMin.y, b.boxMin.y), fminf(a.boxMin.z, b.boxMin.z), 0};
  r.boxMax = Vec4{fmaxf(a.boxMax.x, b.boxMax.x), fmaxf(a.boxMax.y, b.boxMax.y), fmaxf(a.boxMax.z, b.boxMax.z), 0};
  const Vec3 centre = (xyz(r.boxMin) + xyz(r.boxMax)) * 0.5f;
  const float m = a.com.w + b.com.w;
  Vec3 com = centre;  // massless bodies: any point inside the box will do
  if (m > 0.0f) {
    // Rounding can put the weighted mean just outside the box. Inside it, a node whose bodies
    // all sit at one point has its centre of mass exactly there (its field is then exact).
    com = (xyz(a.com) * a.com.w + xyz(b.com) * b.com.w) * (1.0f / m);
    com = Vec3{fminf(fmaxf(com.x, r.boxMin.x), r.boxMax.x), fminf(fmaxf(com.y, r.boxMin.y), r.boxMax.y),
               fminf(fmaxf(com.z, r.boxMin.z), r.boxMax.z)};
  }
  r.com = make4(com, m);
  r.quad0 = Vec4{0, 0, 0, 0};
  r.quad1 = Vec4{0, 0, 0, 0};
  addShiftedQuadrupole(a, com, r.quad0, r.quad1);
  addShiftedQuadrupole(b, com, r.quad0, r.quad1);
  const float side = fmaxf(fmaxf(r.boxMax.x - r.boxMin.x, r.boxMax.y - r.boxMin.y), r.boxMax.z - r.boxMin.z);
  const float rcrit = side / theta + length(com - centre);
  r.quad1.z = rcrit * rcrit;
  return r;
}

// True when the group's box [gmin, gmax] comes closer to the node's centre of mass than the
// node's opening radius: the node must then be opened.
MURMUR_HD bool treeMustOpen(const Vec3& gmin, const Vec3& gmax, const Vec4& com, float rcrit2) {
  const float dx = fmaxf(fmaxf(gmin.x - com.x, com.x - gmax.x), 0.0f);
  const float dy = fmaxf(fmaxf(gmin.y - com.y, com.y - gmax.y), 0.0f);
  const float dz = fmaxf(fmaxf(gmin.z - com.z, com.z - gmax.z), 0.0f);
  return addRn(addRn(mulRn(dx, dx), mulRn(dy, dy)), mulRn(dz, dz)) < rcrit2;
}

// Acceleration at x (without G) of a node's mass and quadrupole, softened like gravityPair:
// with r = com - x and s = |r|^2 + eps^2,
//   a = r (M s^-3/2 + 5/2 (r.Q.r) s^-7/2) - Q.r s^-5/2.
MURMUR_HD Vec3 quadrupoleAccel(const Vec3& x, const Vec4& com, const Vec4& q0, const Vec4& q1, float eps2) {
  const Vec3 r = xyz(com) - x;
  const float s = dot(r, r) + eps2;
  const float inv = rsqrtHD(s);
  const float inv2 = inv * inv;
  const float inv3 = inv * inv2;
  const float inv5 = inv3 * inv2;
  const Vec3 qr{q0.x * r.x + q0.w * r.y + q1.x * r.z, q0.w * r.x + q0.y * r.y + q1.y * r.z,
                q1.x * r.x + q1.y * r.y + q0.z * r.z};
  const float rqr = dot(r, qr);
  return r * (com.w * inv3 + 2.5f * rqr * inv5 * inv2) - qr * inv5;
}

// ---------------------------------------------------------------------------------------------
// The CPU executor of the tree stages (the reference for the CUDA kernels; plain loops).

// Bounding box of the bodies (xyz; w unused).
void treeBounds(const Vec4* pos, size_t n, Vec4& lo, Vec4& hi);

// Morton key per body in the cube of [lo, hi].
void treeKeys(const Vec4* pos, size_t n, const Vec4& lo, const Vec4& hi, std::vector<uint64_t>& keys);

// Stable sort of body indices by key (ties keep ascending index, as the GPU radix sort does).
void treeSortByKey(const std::vector<uint64_t>& keys, std::vector<uint64_t>& sortedKeys,
                   std::vector<uint32_t>& sortedIndex);

// The tree over n bodies in key order. For n == 1 there are no internal nodes.
struct CpuTree {
  std::vector<TreeLinks> links;        // [n - 1]
  std::vector<Vec4> com, quad0, quad1;  // [n - 1], see TreeMoments
  uint32_t root = 0;                    // node 0, or body 0 | kTreeLeafBit when n == 1
  std::vector<uint32_t> groupStart;     // first body of each walk group, in order, then n
};

// buildRadixNode per node, the walk groups, then the moments bottom-up.
void buildTree(const Vec4* sortedPos, const uint64_t* sortedKeys, uint32_t n, float theta, CpuTree& tree);

// G * acceleration of every sorted body through the group walk. leafSize: a node of at most
// this many bodies that must be opened is summed body by body.
void treeAccelerations(const CpuTree& tree, const Vec4* sortedPos, uint32_t n, float eps2, float G, int leafSize,
                       Vec4* acc);
// The same for the walk groups [groupBegin, groupEnd) only: acc of the bodies
// [groupStart[groupBegin], groupStart[groupEnd]), each the value the whole walk gives it.
void treeAccelerationsOfGroups(const CpuTree& tree, const Vec4* sortedPos, float eps2, float G, int leafSize,
                               size_t groupBegin, size_t groupEnd, Vec4* acc);

// The tree over k ranks: share r of the walk groups starts at the first group that starts at or
// after this body of the sorted order (the bodies split evenly; a group is never cut).
MURMUR_HD uint32_t treeShareStart(uint32_t n, int r, int k) {
  return static_cast<uint32_t>(uint64_t(n) * uint64_t(r) / uint64_t(k));
}

}  // namespace murmur::core
