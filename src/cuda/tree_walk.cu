// treeWalk: the force stage of the tree pipeline. One warp walks the tree for a group of 32
// consecutive sorted bodies (one body per lane), testing nodes against the group's bounding
// box: every lane reads the same node and takes the same branch, so the warp never diverges in
// the walk and each node costs one broadcast load. The stack is the warp's, in shared memory.
// FMA contraction stays on here (forces are continuous); the opening test itself rounds like
// the CPU (core::treeMustOpen uses explicitly rounded products).
#include "cuda/tree_build.h"

#include "core/physics.h"
#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

using core::TreeLinks;
using core::Vec3;
using core::Vec4;

namespace {

static_assert(core::kTreeGroupSize == kWarpSize, "a tree group is one warp");

__device__ __forceinline__ TreeLinks ldgLinks(const TreeLinks* p) {
  const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
  return TreeLinks{u.x, u.y, u.z, u.w};
}

__global__ void __launch_bounds__(1024)
treeWalkKernel(const Vec4* __restrict__ pos, uint32_t n, uint32_t root, const TreeLinks* __restrict__ links,
               const Vec4* __restrict__ com, const Vec4* __restrict__ quad0, const Vec4* __restrict__ quad1,
               float eps2, float G, uint32_t leafSize, Vec4* __restrict__ acc) {
  extern __shared__ uint32_t stacks[];
  const uint32_t lane = threadIdx.x % kWarpSize;
  uint32_t* stack = stacks + (threadIdx.x / kWarpSize) * core::kTreeStackSize;
  const uint32_t begin = globalThreadIndex() - lane;
  if (begin >= n) return;  // the whole warp leaves together
  const uint32_t i = begin + lane;
  const bool active = i < n;
  const Vec4 pi = ldg4(pos + (active ? i : begin));  // idle lanes repeat a group body: same box

  float lo[3] = {pi.x, pi.y, pi.z}, hi[3] = {pi.x, pi.y, pi.z};
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off /= 2) {
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      lo[a] = fminf(lo[a], __shfl_xor_sync(kFullWarpMask, lo[a], off));
      hi[a] = fmaxf(hi[a], __shfl_xor_sync(kFullWarpMask, hi[a], off));
    }
  }
  const Vec3 gmin{lo[0], lo[1], lo[2]}, gmax{hi[0], hi[1], hi[2]};

  Vec3 a{0.0f, 0.0f, 0.0f};
  if (lane == 0) stack[0] = root;
  __syncwarp();
  int sp = 1;
  while (sp > 0) {
    const uint32_t node = stack[--sp];
    __syncwarp();  // every lane has read the slot before lane 0 may overwrite it
    if (node & core::kTreeLeafBit) {
      a += core::gravityPair(pi, ldg4(pos + (node & ~core::kTreeLeafBit)), eps2);
      continue;
    }
    const Vec4 c = ldg4(com + node);
    const Vec4 q1 = ldg4(quad1 + node);
    if (!core::treeMustOpen(gmin, gmax, c, q1.z)) {
      a += core::quadrupoleAccel(xyz(pi), c, ldg4(quad0 + node), q1, eps2);
      continue;
    }
    const TreeLinks k = ldgLinks(links + node);
    if (k.last - k.first < leafSize) {
      for (uint32_t j = k.first; j <= k.last; ++j) a += core::gravityPair(pi, ldg4(pos + j), eps2);
    } else {
      if (lane == 0) {
        stack[sp] = k.right;
        stack[sp + 1] = k.left;
      }
      sp += 2;
      __syncwarp();
    }
  }
  if (active) st4(acc + i, make4(a * G, 0.0f));
}

}  // namespace

void launchTreeWalk(const Vec4* d_sortedPos, uint32_t n, const TreeBuffers& b, float eps2, float G, int leafSize,
                    Vec4* d_acc, const LaunchConfig& lc) {
  if (n == 0) return;
  const uint32_t root = n == 1 ? core::kTreeLeafBit : 0u;
  const size_t groups = (size_t(n) + kWarpSize - 1) / kWarpSize;
  const size_t shared = size_t(lc.block / kWarpSize) * core::kTreeStackSize * sizeof(uint32_t);
  treeWalkKernel<<<lc.blocksFor(groups * kWarpSize), lc.block, shared, lc.stream>>>(
      d_sortedPos, n, root, b.links.get(), b.com.get(), b.quad0.get(), b.quad1.get(), eps2, G,
      static_cast<uint32_t>(leafSize), d_acc);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
