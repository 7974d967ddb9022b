// Tree-build kernels. Compiled without FMA contraction (see CMakeLists.txt): the Morton keys
// decide the tree's shape and the moments decide which nodes the walk opens, so both must round
// exactly like the CPU reference (core/tree.cpp) for the two engines to build the same tree.
#include "cuda/tree_build.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>

#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

using core::TreeLinks;
using core::TreeMoments;
using core::Vec4;

namespace {

// The radix sort orders all 63 bits of the Morton key.
constexpr int kKeyBits = 3 * core::kMortonBitsPerAxis;
// Enough blocks of the bounds reduction to fill the GPU; each block ends with six atomics.
constexpr unsigned kMaxBoundsBlocks = 1024;

// Floats as unsigned integers whose order is the floats' order, so that atomicMin/atomicMax on
// the integers give the floats' min/max (exact, in any order: the same box as the CPU's).
__device__ __forceinline__ unsigned int orderedBits(float f) {
  const unsigned int u = __float_as_uint(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}
__device__ __forceinline__ float orderedFloat(unsigned int u) {
  return __uint_as_float((u & 0x80000000u) ? (u & 0x7fffffffu) : ~u);
}

__device__ __forceinline__ void decodeBounds(const unsigned int* bounds, Vec4& lo, Vec4& hi) {
  lo = Vec4{orderedFloat(bounds[0]), orderedFloat(bounds[1]), orderedFloat(bounds[2]), 0.0f};
  hi = Vec4{orderedFloat(bounds[3]), orderedFloat(bounds[4]), orderedFloat(bounds[5]), 0.0f};
}

// treeBounds: grid-stride min/max, reduced per warp, then per block through shared memory.
__global__ void __launch_bounds__(1024) treeBoundsKernel(const Vec4* __restrict__ pos, uint32_t n,
                                                         unsigned int* __restrict__ bounds) {
  __shared__ float partial[6][kMaxWarpsPerBlock];
  float v[6] = {INFINITY, INFINITY, INFINITY, -INFINITY, -INFINITY, -INFINITY};
  for (uint32_t i = globalThreadIndex(); i < n; i += gridDim.x * blockDim.x) {
    const Vec4 p = ldg4(pos + i);
    v[0] = fminf(v[0], p.x);
    v[1] = fminf(v[1], p.y);
    v[2] = fminf(v[2], p.z);
    v[3] = fmaxf(v[3], p.x);
    v[4] = fmaxf(v[4], p.y);
    v[5] = fmaxf(v[5], p.z);
  }
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int off = kWarpSize / 2; off > 0; off /= 2) {
#pragma unroll
    for (int a = 0; a < 3; ++a) {
      v[a] = fminf(v[a], __shfl_xor_sync(kFullWarpMask, v[a], off));
      v[3 + a] = fmaxf(v[3 + a], __shfl_xor_sync(kFullWarpMask, v[3 + a], off));
    }
  }
  if (lane == 0)
    for (int a = 0; a < 6; ++a) partial[a][warp] = v[a];
  __syncthreads();
  if (threadIdx.x < 6) {
    const int a = threadIdx.x;
    float r = partial[a][0];
    for (int w = 1; w < static_cast<int>(blockDim.x / kWarpSize); ++w) r = a < 3 ? fminf(r, partial[a][w]) : fmaxf(r, partial[a][w]);
    if (a < 3)
      atomicMin(bounds + a, orderedBits(r));
    else
      atomicMax(bounds + a, orderedBits(r));
  }
}

// treeKeys (label): the key of body i and its index (the sort's payload).
__global__ void __launch_bounds__(1024) treeKeysKernel(const Vec4* __restrict__ pos, const uint32_t* __restrict__ order,
                                                       uint32_t n, const unsigned int* __restrict__ bounds,
                                                       uint64_t* __restrict__ keys, uint32_t* __restrict__ index) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  Vec4 lo, hi;
  decodeBounds(bounds, lo, hi);
  keys[i] = core::mortonKey(ldg4(pos + (order ? __ldg(order + i) : i)), lo, core::mortonScale(lo, hi));
  index[i] = i;
}

// buildRadixTree: internal node i from the sorted keys alone (Karras 2012), and the parent links
// that the bottom-up pass climbs. parent: [0, n - 1) internal nodes, [n - 1, 2n - 1) bodies.
__global__ void __launch_bounds__(1024) buildRadixTreeKernel(const uint64_t* __restrict__ keys, uint32_t n,
                                                             TreeLinks* __restrict__ links,
                                                             uint32_t* __restrict__ parent,
                                                             uint32_t* __restrict__ groupFlag) {
  const uint32_t i = globalThreadIndex();
  if (i >= n - 1) return;
  const TreeLinks k = core::buildRadixNode(keys, static_cast<int>(n), static_cast<int>(i));
  links[i] = k;
  core::markGroupStarts(k, groupFlag);
  parent[k.left & core::kTreeLeafBit ? (n - 1) + (k.left & ~core::kTreeLeafBit) : k.left] = i;
  parent[k.right & core::kTreeLeafBit ? (n - 1) + (k.right & ~core::kTreeLeafBit) : k.right] = i;
  if (i == 0) parent[0] = core::kTreeNoParent;
}

struct NodeArrays {
  Vec4 *com, *quad0, *quad1, *boxMin, *boxMax;
};

// Another thread wrote these moments; .cg loads skip this SM's L1, which may hold older lines.
__device__ __forceinline__ TreeMoments loadMoments(const NodeArrays& a, uint32_t c, const Vec4* pos) {
  if (c & core::kTreeLeafBit) return core::bodyMoments(ldg4(pos + (c & ~core::kTreeLeafBit)));
  auto cg = [](const Vec4* p) { return toVec4(__ldcg(reinterpret_cast<const float4*>(p))); };
  TreeMoments m;
  m.com = cg(a.com + c);
  m.quad0 = cg(a.quad0 + c);
  m.quad1 = cg(a.quad1 + c);
  m.boxMin = cg(a.boxMin + c);
  m.boxMax = cg(a.boxMax + c);
  return m;
}

// treeMoments: one thread per body climbs towards the root. At each node the first of the two
// children's threads to arrive stops; the second, which knows both children are done, sums the
// node and climbs on. Every node is thus computed once, after its children, with no level
// barriers (the bottom-up pass of Karras 2012 / Apetrei 2014).
__global__ void __launch_bounds__(1024) treeMomentsKernel(const Vec4* __restrict__ pos, uint32_t n, float theta,
                                                          const TreeLinks* __restrict__ links,
                                                          const uint32_t* __restrict__ parent,
                                                          uint32_t* __restrict__ visits, NodeArrays out) {
  const uint32_t b = globalThreadIndex();
  if (b >= n) return;
  uint32_t node = parent[(n - 1) + b];
  while (node != core::kTreeNoParent) {
    // Publish the child this thread finished (if any) before telling the sibling's thread.
    __threadfence();
    if (atomicAdd(visits + node, 1u) == 0) return;
    const TreeLinks k = links[node];
    const TreeMoments m = core::combineChildren(loadMoments(out, k.left, pos), loadMoments(out, k.right, pos), theta);
    st4(out.com + node, m.com);
    st4(out.quad0 + node, m.quad0);
    st4(out.quad1 + node, m.quad1);
    st4(out.boxMin + node, m.boxMin);
    st4(out.boxMax + node, m.boxMax);
    node = parent[node];
  }
}

}  // namespace

void TreeBuffers::reserve(uint32_t n) {
  if (n <= capacity && capacity > 0) return;
  release();
  const uint32_t nodes = n > 1 ? n - 1 : 1;
  for (int k = 0; k < 2; ++k) {
    keys[k].allocate(n);
    index[k].allocate(n);
  }
  size_t bytes = 0;
  cub::DoubleBuffer<uint64_t> dk(nullptr, nullptr);
  cub::DoubleBuffer<uint32_t> dv(nullptr, nullptr);
  MURMUR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, static_cast<int>(n), 0, kKeyBits));
  sortTemp.allocate(bytes);
  links.allocate(nodes);
  com.allocate(nodes);
  quad0.allocate(nodes);
  quad1.allocate(nodes);
  boxMin.allocate(nodes);
  boxMax.allocate(nodes);
  parent.allocate(size_t(nodes) + n);
  visits.allocate(nodes);
  bounds.allocate(6);
  groupFlag.allocate(n);
  groupStart.allocate(n);
  counters.allocate(3);
  size_t selectBytes = 0;
  MURMUR_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, selectBytes, thrust::counting_iterator<uint32_t>(0),
                                               groupFlag.get(), groupStart.get(), counters.get(), static_cast<int>(n)));
  selectTemp.allocate(selectBytes);
  capacity = n;
}

void TreeBuffers::release() {
  for (int k = 0; k < 2; ++k) {
    keys[k].release();
    index[k].release();
  }
  sortTemp.release();
  links.release();
  com.release();
  quad0.release();
  quad1.release();
  boxMin.release();
  boxMax.release();
  parent.release();
  visits.release();
  bounds.release();
  groupFlag.release();
  groupStart.release();
  counters.release();
  selectTemp.release();
  capacity = 0;
}

size_t TreeBuffers::bytesFor(size_t n) {
  if (n == 0) return 0;
  // Keys and indices (double-buffered), five Vec4 and one TreeLinks per node, parents, counters.
  // Keys and indices (double-buffered), five Vec4 and one TreeLinks per node, parents, counters,
  // group flags and starts; the compaction's scratch is small next to the sort's.
  const size_t perBody = 2 * (sizeof(uint64_t) + sizeof(uint32_t)) + 5 * sizeof(Vec4) + sizeof(TreeLinks) +
                         2 * sizeof(uint32_t) + sizeof(uint32_t) + 2 * sizeof(uint32_t);
  size_t scratch = 0;
  cub::DoubleBuffer<uint64_t> dk(nullptr, nullptr);
  cub::DoubleBuffer<uint32_t> dv(nullptr, nullptr);
  if (cub::DeviceRadixSort::SortPairs(nullptr, scratch, dk, dv, static_cast<int>(n), 0, kKeyBits) != cudaSuccess) {
    cudaGetLastError();
    scratch = n * sizeof(uint64_t) + (size_t(1) << 20);
  }
  return n * perBody + scratch;
}

void launchTreeBounds(const Vec4* d_pos, uint32_t n, TreeBuffers& b, const LaunchConfig& lc) {
  // Empty ranges: min slots start at the largest encoding, max slots at the smallest.
  MURMUR_CUDA_CHECK(cudaMemsetAsync(b.bounds.get(), 0xff, 3 * sizeof(unsigned int), lc.stream));
  MURMUR_CUDA_CHECK(cudaMemsetAsync(b.bounds.get() + 3, 0x00, 3 * sizeof(unsigned int), lc.stream));
  const unsigned blocks = std::min(lc.blocksFor(n), kMaxBoundsBlocks);
  treeBoundsKernel<<<blocks, lc.block, 0, lc.stream>>>(d_pos, n, b.bounds.get());
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchTreeKeys(const Vec4* d_pos, uint32_t n, TreeBuffers& b, const LaunchConfig& lc, const uint32_t* d_order) {
  treeKeysKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_order, n, b.bounds.get(), b.keys[0].get(),
                                                                b.index[0].get());
  MURMUR_CUDA_LAUNCH_CHECK();
}

int treeSort(uint32_t n, TreeBuffers& b, const LaunchConfig& lc) {
  cub::DoubleBuffer<uint64_t> keys(b.keys[0].get(), b.keys[1].get());
  cub::DoubleBuffer<uint32_t> values(b.index[0].get(), b.index[1].get());
  size_t bytes = b.sortTemp.size();
  MURMUR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(b.sortTemp.get(), bytes, keys, values, static_cast<int>(n), 0,
                                                    kKeyBits, lc.stream));
  MURMUR_CUDA_LAUNCH_CHECK();
  return keys.selector;
}

void launchBuildTree(const Vec4* d_sortedPos, const uint64_t* d_sortedKeys, uint32_t n, float theta, TreeBuffers& b,
                     const LaunchConfig& lc) {
  MURMUR_CUDA_CHECK(cudaMemsetAsync(b.groupFlag.get(), 0, size_t(n) * sizeof(uint32_t), lc.stream));
  if (n <= uint32_t(core::kTreeGroupSize)) {
    // The root is the only group.
    const uint32_t one = 1;
    MURMUR_CUDA_CHECK(cudaMemcpyAsync(b.groupFlag.get(), &one, sizeof one, cudaMemcpyHostToDevice, lc.stream));
  }
  if (n >= 2) {
    buildRadixTreeKernel<<<lc.blocksFor(n - 1), lc.block, 0, lc.stream>>>(d_sortedKeys, n, b.links.get(),
                                                                           b.parent.get(), b.groupFlag.get());
    MURMUR_CUDA_LAUNCH_CHECK();
  }
  size_t selectBytes = b.selectTemp.size();
  MURMUR_CUDA_CHECK(cub::DeviceSelect::Flagged(b.selectTemp.get(), selectBytes, thrust::counting_iterator<uint32_t>(0),
                                               b.groupFlag.get(), b.groupStart.get(), b.counters.get(),
                                               static_cast<int>(n), lc.stream));
  MURMUR_CUDA_CHECK(cudaMemsetAsync(b.counters.get() + 1, 0, sizeof(uint32_t), lc.stream));
  if (n < 2) return;  // one body: the walk's root is the body itself
  MURMUR_CUDA_CHECK(cudaMemsetAsync(b.visits.get(), 0, size_t(n - 1) * sizeof(uint32_t), lc.stream));
  const NodeArrays out{b.com.get(), b.quad0.get(), b.quad1.get(), b.boxMin.get(), b.boxMax.get()};
  treeMomentsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_sortedPos, n, theta, b.links.get(), b.parent.get(),
                                                                  b.visits.get(), out);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
