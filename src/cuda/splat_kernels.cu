#include "cuda/splat_kernels.h"

#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

namespace {

// Reading the slot first skips the atomic when a nearer body is already there: in a dense frame
// most bodies lose, and a load is far cheaper than a contended atomic.
__device__ __forceinline__ void atomicMinKey(uint64_t* slot, uint64_t key) {
  if (key < *reinterpret_cast<volatile unsigned long long*>(slot))
    atomicMin(reinterpret_cast<unsigned long long*>(slot), static_cast<unsigned long long>(key));
}

__global__ void splatClearKernel(uint64_t* __restrict__ keys, size_t numPixels) {
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < numPixels) keys[i] = core::kSplatEmpty;
}

// Every thread of a warp reaches the warp-level exchange (no early return): threads past n and
// bodies that are culled or drawn as discs take part with a pixel no body can have.
template <bool WarpReduce>
__global__ void __launch_bounds__(1024)
    splatKernel(const core::Vec4* __restrict__ pos, const core::Vec4* __restrict__ vel,
                const uint32_t* __restrict__ id, uint32_t n, core::SplatView v, uint64_t* keys) {
  const uint32_t i = globalThreadIndex();
  core::SplatBody s;
  bool visible = false;
  if (i < n) visible = core::splatProject(v, ldg4(pos + i), ldg4(vel + i), __ldg(id + i), s);
  const bool point = visible && core::splatIsPoint(v, s);
  uint32_t pixel = 0xffffffffu;
  uint64_t key = core::kSplatEmpty;
  if (point && !core::splatPointPixel(v, s, pixel, key)) pixel = 0xffffffffu;

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if (WarpReduce) {
    // Lanes with the same pixel form a group; the group's minimum key is the minimum of its depth
    // words, then of the colour words among the lanes at that depth: one atomic per group.
    const unsigned group = __match_any_sync(kFullWarpMask, pixel);
    const uint32_t depth = static_cast<uint32_t>(key >> 32);
    const uint32_t minDepth = __reduce_min_sync(group, depth);
    const uint32_t colour = depth == minDepth ? static_cast<uint32_t>(key) : 0xffffffffu;
    const uint32_t minColour = __reduce_min_sync(group, colour);
    const int leader = __ffs(group) - 1;
    if (pixel != 0xffffffffu && static_cast<int>(threadIdx.x % kWarpSize) == leader)
      atomicMinKey(keys + pixel, (static_cast<uint64_t>(minDepth) << 32) | minColour);
  } else
#endif
  if (pixel != 0xffffffffu) {
    atomicMinKey(keys + pixel, key);
  }

  if (visible && !point) {
    core::splatDisc(v, s, [keys](uint32_t px, uint64_t k) { atomicMinKey(keys + px, k); });
  }
}

}  // namespace

void launchSplatClear(uint64_t* d_keys, size_t numPixels, const LaunchConfig& lc) {
  if (numPixels == 0) return;
  splatClearKernel<<<lc.blocksFor(numPixels), lc.block, 0, lc.stream>>>(d_keys, numPixels);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchSplat(const core::Vec4* d_pos, const core::Vec4* d_vel, const uint32_t* d_id, uint32_t n,
                 const core::SplatView& view, uint64_t* d_keys, bool warpReduce, const LaunchConfig& lc) {
  if (n == 0 || view.width <= 0 || view.height <= 0) return;
  if (warpReduce)
    splatKernel<true><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, d_id, n, view, d_keys);
  else
    splatKernel<false><<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, d_id, n, view, d_keys);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
