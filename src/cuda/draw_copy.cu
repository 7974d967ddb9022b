#include "cuda/draw_copy.h"

#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

namespace {

__global__ void __launch_bounds__(1024)
    drawCopyKernel(const core::Vec4* __restrict__ pos, const core::Vec4* __restrict__ vel,
                   const uint32_t* __restrict__ id, uint32_t n, float4* __restrict__ posOut,
                   float4* __restrict__ velOut, uint32_t* __restrict__ idOut) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  if (posOut) posOut[i] = __ldg(reinterpret_cast<const float4*>(pos + i));
  if (velOut) velOut[i] = __ldg(reinterpret_cast<const float4*>(vel + i));
  if (idOut) idOut[i] = id[i];
}

}  // namespace

void launchDrawCopy(const core::Vec4* d_pos, const core::Vec4* d_vel, const uint32_t* d_id, uint32_t n,
                    void* d_posOut, void* d_velOut, void* d_idOut, const LaunchConfig& lc) {
  if (n == 0) return;
  drawCopyKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, d_id, n, static_cast<float4*>(d_posOut),
                                                               static_cast<float4*>(d_velOut),
                                                               static_cast<uint32_t*>(d_idOut));
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
