// treeWalk: the force stage of the tree pipeline. One warp walks the tree for a group of at most
// 32 sorted bodies (one body per lane; core/tree.h says how groups are chosen), testing nodes
// against the group's bounding box: every lane reads the same node and takes the same branch, so
// the warp never diverges in the walk and each node costs one broadcast load. The stack is the
// warp's, in shared memory. Walks differ in length by an order of magnitude (a group in the
// sparse halo opens more of the tree), so warps take groups from a counter until none is left
// rather than one fixed group each.
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
// Stack entries per warp. A step pops k <= 32 nodes and pushes at most 2k, and batches run only
// while the stack has room for one more batch plus a depth-first finish (core::kTreeStackSize),
// so it never overflows.
constexpr int kWalkStackSize = 512;
static_assert(kWalkStackSize >= 2 * kWarpSize + 2 * core::kTreeStackSize, "room for a batch and a depth-first finish");

__device__ __forceinline__ TreeLinks ldgLinks(const TreeLinks* p) {
  const uint4 u = __ldg(reinterpret_cast<const uint4*>(p));
  return TreeLinks{u.x, u.y, u.z, u.w};
}

// Accelerations of the bodies [begin, end) (at most one per lane) into acc.
__device__ __forceinline__ void walkGroup(uint32_t begin, uint32_t end, uint32_t lane, uint32_t* stack,
                                          const Vec4* __restrict__ pos, uint32_t root,
                                          const TreeLinks* __restrict__ links, const Vec4* __restrict__ com,
                                          const Vec4* __restrict__ quad0, const Vec4* __restrict__ quad1,
                                          float eps2, float G, uint32_t leafSize, Vec4* __restrict__ acc) {
  const uint32_t i = begin + lane;
  const bool active = i < end;
  const Vec4 pi = ldg4(pos + (active ? i : begin));  // idle lanes repeat a group body: same box

  float lo[3] = {pi.x, pi.y, pi.z}, hi[3] = {pi.x, pi.y, pi.z};
  warpMinMax(lo, hi);
  const Vec3 gmin{lo[0], lo[1], lo[2]}, gmax{hi[0], hi[1], hi[2]};

  Vec3 a{0.0f, 0.0f, 0.0f};
  if (lane == 0) stack[0] = root;
  __syncwarp();
  int sp = 1;
  while (sp > 0) {
    // Up to 32 nodes per step, one per lane: the tests and their loads run side by side instead
    // of one dependent load after another. Near the top of the stack's capacity the warp falls
    // back to one node per step, which is depth-first and needs at most kTreeStackSize more.
    const int k = sp + kWarpSize <= kWalkStackSize - core::kTreeStackSize ? min(sp, kWarpSize) : 1;
    const bool has = static_cast<int>(lane) < k;
    const uint32_t node = has ? stack[sp - 1 - static_cast<int>(lane)] : 0u;
    sp -= k;
    __syncwarp();  // every lane has read its slot before the pushes below may overwrite it
    const bool isBody = has && (node & core::kTreeLeafBit);
    Vec4 c{0, 0, 0, 0}, q0{0, 0, 0, 0}, q1{0, 0, 0, 0};
    TreeLinks lk{0, 0, 0, 0};
    bool accept = false, direct = false, open = false;
    if (has && !isBody) {
      c = ldg4(com + node);
      q1 = ldg4(quad1 + node);
      lk = ldgLinks(links + node);
      accept = !core::treeMustOpen(gmin, gmax, c, q1.z);
      if (accept)
        q0 = ldg4(quad0 + node);
      else if (lk.last - lk.first < leafSize)
        direct = true;
      else
        open = true;
    }
    const unsigned openMask = __ballot_sync(kFullWarpMask, open);
    if (open) {
      const int slot = sp + 2 * __popc(openMask & ((1u << lane) - 1u));
      stack[slot] = lk.right;
      stack[slot + 1] = lk.left;
    }
    sp += 2 * __popc(openMask);
    // Every lane then sums what each lane found, the finder broadcasting it by shuffle.
    for (unsigned m = __ballot_sync(kFullWarpMask, isBody); m; m &= m - 1) {
      const int src = __ffs(m) - 1;
      const uint32_t body = __shfl_sync(kFullWarpMask, node, src) & ~core::kTreeLeafBit;
      a += core::gravityPair(pi, ldg4(pos + body), eps2);
    }
    for (unsigned m = __ballot_sync(kFullWarpMask, accept); m; m &= m - 1) {
      const int src = __ffs(m) - 1;
      auto bc = [&](float v) { return __shfl_sync(kFullWarpMask, v, src); };
      const Vec4 cc{bc(c.x), bc(c.y), bc(c.z), bc(c.w)};
      const Vec4 b0{bc(q0.x), bc(q0.y), bc(q0.z), bc(q0.w)};
      const Vec4 b1{bc(q1.x), bc(q1.y), 0.0f, 0.0f};
      a += core::quadrupoleAccel(xyz(pi), cc, b0, b1, eps2);
    }
    for (unsigned m = __ballot_sync(kFullWarpMask, direct); m; m &= m - 1) {
      const int src = __ffs(m) - 1;
      const uint32_t first = __shfl_sync(kFullWarpMask, lk.first, src);
      const uint32_t last = __shfl_sync(kFullWarpMask, lk.last, src);
#pragma unroll 4
      for (uint32_t j = first; j <= last; ++j) a += core::gravityPair(pi, ldg4(pos + j), eps2);
    }
    __syncwarp();  // the pushes are visible before the next step's reads
  }
  if (active) st4(acc + i, make4(a * G, 0.0f));
}

__global__ void __launch_bounds__(1024)
treeWalkKernel(const Vec4* __restrict__ pos, uint32_t n, uint32_t root, const TreeLinks* __restrict__ links,
               const Vec4* __restrict__ com, const Vec4* __restrict__ quad0, const Vec4* __restrict__ quad1,
               const uint32_t* __restrict__ groupStart, uint32_t* __restrict__ counters, uint32_t stopSlot,
               float eps2, float G, uint32_t leafSize, Vec4* __restrict__ acc) {
  extern __shared__ uint32_t stacks[];
  const uint32_t lane = threadIdx.x % kWarpSize;
  uint32_t* stack = stacks + (threadIdx.x / kWarpSize) * kWalkStackSize;
  // Groups [counters[1], counters[stopSlot]): all of them (stopSlot 0) or a share (2).
  const uint32_t numGroups = counters[0], stop = counters[stopSlot];
  for (;;) {
    uint32_t g = 0;
    if (lane == 0) g = atomicAdd(counters + 1, 1u);
    g = __shfl_sync(kFullWarpMask, g, 0);
    if (g >= stop) return;  // the whole warp leaves together
    const uint32_t end = g + 1 < numGroups ? groupStart[g + 1] : n;
    walkGroup(groupStart[g], end, lane, stack, pos, root, links, com, quad0, quad1, eps2, G, leafSize, acc);
    __syncwarp();  // the stack is free again only when every lane has left the walk
  }
}

}  // namespace

namespace {

__global__ void treeShareKernel(uint32_t n, int me, int k, const uint32_t* __restrict__ groupStart,
                                uint32_t* __restrict__ counters, uint32_t* __restrict__ bodyCut) {
  const int r = static_cast<int>(threadIdx.x);  // k + 1 threads, one per share boundary
  const uint32_t groups = counters[0];
  uint32_t cut = groups;
  if (r == 0) {
    cut = 0;
  } else if (r < k) {  // the first group starting at or after the share's first body
    cut = lowerBound(groupStart, groups, core::treeShareStart(n, r, k));
  }
  bodyCut[r] = cut < groups ? groupStart[cut] : n;
  __syncthreads();  // every thread has read counters[0] before two of them write the share
  if (r == me) counters[1] = cut;
  if (r == me + 1) counters[2] = cut;
}

void walk(const Vec4* d_sortedPos, uint32_t n, uint32_t bodies, const TreeBuffers& b, uint32_t stopSlot, float eps2,
          float G, int leafSize, Vec4* d_acc, const LaunchConfig& lc) {
  if (n == 0 || bodies == 0) return;
  const uint32_t root = n == 1 ? core::kTreeLeafBit : 0u;
  // One warp per 32 bodies: more warps than groups would only find the counter exhausted, and
  // groups average 20-ish bodies, so each warp walks one or two.
  const size_t warps = (size_t(bodies) + kWarpSize - 1) / kWarpSize;
  const size_t shared = size_t(lc.block / kWarpSize) * kWalkStackSize * sizeof(uint32_t);
  MURMUR_CUDA_CHECK(
      cudaFuncSetAttribute(treeWalkKernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(shared)));
  treeWalkKernel<<<lc.blocksFor(warps * kWarpSize), lc.block, shared, lc.stream>>>(
      d_sortedPos, n, root, b.links.get(), b.com.get(), b.quad0.get(), b.quad1.get(), b.groupStart.get(),
      b.counters.get(), stopSlot, eps2, G, static_cast<uint32_t>(leafSize), d_acc);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace

void launchTreeWalk(const Vec4* d_sortedPos, uint32_t n, const TreeBuffers& b, float eps2, float G, int leafSize,
                    Vec4* d_acc, const LaunchConfig& lc) {
  walk(d_sortedPos, n, n, b, 0, eps2, G, leafSize, d_acc, lc);
}

void launchTreeShare(uint32_t n, int me, int k, TreeBuffers& b, uint32_t* d_bodyCut, const LaunchConfig& lc) {
  treeShareKernel<<<1, static_cast<unsigned>(k + 1), 0, lc.stream>>>(n, me, k, b.groupStart.get(), b.counters.get(),
                                                                      d_bodyCut);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchTreeWalkShare(const Vec4* d_sortedPos, uint32_t n, uint32_t shareBodies, const TreeBuffers& b, float eps2,
                         float G, int leafSize, Vec4* d_acc, const LaunchConfig& lc) {
  walk(d_sortedPos, n, shareBodies, b, 2, eps2, G, leafSize, d_acc, lc);
}

}  // namespace murmur::cuda
