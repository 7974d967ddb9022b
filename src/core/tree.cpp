#include "core/tree.h"

#include <algorithm>
#include <numeric>

#include "core/physics.h"

namespace murmur::core {

void treeBounds(const Vec4* pos, size_t n, Vec4& lo, Vec4& hi) {
  lo = hi = n ? pos[0] : Vec4{0, 0, 0, 0};
  for (size_t i = 1; i < n; ++i) {
    lo.x = std::min(lo.x, pos[i].x);
    lo.y = std::min(lo.y, pos[i].y);
    lo.z = std::min(lo.z, pos[i].z);
    hi.x = std::max(hi.x, pos[i].x);
    hi.y = std::max(hi.y, pos[i].y);
    hi.z = std::max(hi.z, pos[i].z);
  }
}

void treeKeys(const Vec4* pos, size_t n, const Vec4& lo, const Vec4& hi, std::vector<uint64_t>& keys) {
  const float scale = mortonScale(lo, hi);
  keys.resize(n);
  const long count = static_cast<long>(n);
#pragma omp parallel for schedule(static)
  for (long i = 0; i < count; ++i) keys[i] = mortonKey(pos[i], lo, scale);
}

void treeSortByKey(const std::vector<uint64_t>& keys, std::vector<uint64_t>& sortedKeys,
                   std::vector<uint32_t>& sortedIndex) {
  sortedIndex.resize(keys.size());
  std::iota(sortedIndex.begin(), sortedIndex.end(), 0u);
  std::stable_sort(sortedIndex.begin(), sortedIndex.end(), [&](uint32_t a, uint32_t b) { return keys[a] < keys[b]; });
  sortedKeys.resize(keys.size());
  for (size_t k = 0; k < keys.size(); ++k) sortedKeys[k] = keys[sortedIndex[k]];
}

void buildTree(const Vec4* sortedPos, const uint64_t* sortedKeys, uint32_t n, float theta, CpuTree& tree) {
  const uint32_t numNodes = n > 0 ? n - 1 : 0;
  tree.root = n == 1 ? kTreeLeafBit : 0u;
  tree.links.resize(numNodes);
  tree.com.resize(numNodes);
  tree.quad0.resize(numNodes);
  tree.quad1.resize(numNodes);
  tree.groupStart.clear();
  if (n > 0 && n <= uint32_t(kTreeGroupSize)) tree.groupStart.push_back(0);
  if (numNodes == 0) {
    tree.groupStart.push_back(n);
    return;
  }
  std::vector<uint32_t> parentOfNode(numNodes, kTreeNoParent), parentOfBody(n, kTreeNoParent);
  std::vector<uint32_t> groupFlag(n, 0);
  if (n <= uint32_t(kTreeGroupSize)) groupFlag[0] = 1;
  for (uint32_t i = 0; i < numNodes; ++i) {
    const TreeLinks k = buildRadixNode(sortedKeys, static_cast<int>(n), static_cast<int>(i));
    tree.links[i] = k;
    markGroupStarts(k, groupFlag.data());
    for (uint32_t c : {k.left, k.right}) (c & kTreeLeafBit ? parentOfBody[c & ~kTreeLeafBit] : parentOfNode[c]) = i;
  }
  // The same bottom-up order as the GPU (the second child to finish completes its parent), so a
  // node's value depends on its children only and both executors store identical moments.
  tree.groupStart.clear();
  for (uint32_t b = 0; b < n; ++b)
    if (groupFlag[b]) tree.groupStart.push_back(b);
  tree.groupStart.push_back(n);
  std::vector<TreeMoments> moments(numNodes);
  std::vector<uint8_t> visits(numNodes, 0);
  auto childMoments = [&](uint32_t c) { return c & kTreeLeafBit ? bodyMoments(sortedPos[c & ~kTreeLeafBit]) : moments[c]; };
  for (uint32_t b = 0; b < n; ++b) {
    for (uint32_t node = parentOfBody[b]; node != kTreeNoParent; node = parentOfNode[node]) {
      if (visits[node]++ == 0) break;
      moments[node] = combineChildren(childMoments(tree.links[node].left), childMoments(tree.links[node].right), theta);
    }
  }
  for (uint32_t i = 0; i < numNodes; ++i) {
    tree.com[i] = moments[i].com;
    tree.quad0[i] = moments[i].quad0;
    tree.quad1[i] = moments[i].quad1;
  }
}

void treeAccelerations(const CpuTree& tree, const Vec4* sortedPos, uint32_t n, float eps2, float G, int leafSize,
                       Vec4* acc) {
  (void)n;
  const size_t groups = tree.groupStart.empty() ? 0 : tree.groupStart.size() - 1;
  treeAccelerationsOfGroups(tree, sortedPos, eps2, G, leafSize, 0, groups, acc);
}

void treeAccelerationsOfGroups(const CpuTree& tree, const Vec4* sortedPos, float eps2, float G, int leafSize,
                               size_t groupBegin, size_t groupEnd, Vec4* acc) {
  const long first = static_cast<long>(groupBegin), last = static_cast<long>(groupEnd);
#pragma omp parallel for schedule(dynamic, 4)
  for (long g = first; g < last; ++g) {
    const uint32_t begin = tree.groupStart[g];
    const uint32_t end = tree.groupStart[g + 1];
    Vec3 gmin = xyz(sortedPos[begin]), gmax = gmin;
    for (uint32_t i = begin + 1; i < end; ++i) {
      const Vec3 p = xyz(sortedPos[i]);
      gmin = Vec3{std::min(gmin.x, p.x), std::min(gmin.y, p.y), std::min(gmin.z, p.z)};
      gmax = Vec3{std::max(gmax.x, p.x), std::max(gmax.y, p.y), std::max(gmax.z, p.z)};
    }
    Vec3 a[kTreeGroupSize] = {};
    auto direct = [&](uint32_t j) {
      for (uint32_t i = begin; i < end; ++i) a[i - begin] += gravityPair(sortedPos[i], sortedPos[j], eps2);
    };
    // The visiting order (left before right, depth first) is the GPU walk's, so every body sums
    // the same terms in the same order on both executors.
    uint32_t stack[kTreeStackSize];
    int sp = 0;
    stack[sp++] = tree.root;
    while (sp > 0) {
      const uint32_t node = stack[--sp];
      if (node & kTreeLeafBit) {
        direct(node & ~kTreeLeafBit);
        continue;
      }
      const Vec4 com = tree.com[node];
      const Vec4 q1 = tree.quad1[node];
      const TreeLinks k = tree.links[node];
      if (!treeMustOpen(gmin, gmax, com, q1.z)) {
        const Vec4 q0 = tree.quad0[node];
        for (uint32_t i = begin; i < end; ++i)
          a[i - begin] += quadrupoleAccel(xyz(sortedPos[i]), com, q0, q1, eps2);
      } else if (static_cast<int>(k.last - k.first) < leafSize) {
        for (uint32_t j = k.first; j <= k.last; ++j) direct(j);
      } else {
        stack[sp++] = k.right;
        stack[sp++] = k.left;
      }
    }
    for (uint32_t i = begin; i < end; ++i) acc[i] = make4(a[i - begin] * G, 0.0f);
  }
}

}  // namespace murmur::core
