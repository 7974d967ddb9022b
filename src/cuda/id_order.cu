#include "cuda/id_order.h"

#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

namespace {

__global__ void gatherByIdKernel(const core::ConstBodyPointers in, uint32_t n, const core::BodyPointers out) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  moveBody(out, __ldg(in.id + k), in, k);
}

__global__ void scatterByIdKernel(const core::ConstBodyPointers in, const uint32_t* __restrict__ id, uint32_t n,
                                  const core::BodyPointers out) {
  const uint32_t k = globalThreadIndex();
  if (k >= n) return;
  moveBody(out, k, in, __ldg(id + k));
}

// counts[0]: non-finite values; counts[1]: negative masses; counts[2]: masses unlike body 0's;
// counts[3]: bodies off the plane z = 0 (z or vz not 0).
__global__ void checkIdStateKernel(const core::Vec4* __restrict__ pos, const core::Vec4* __restrict__ vel, uint32_t n,
                                   uint32_t* __restrict__ counts) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  uint32_t bad = 0, negative = 0, differs = 0, offPlane = 0;
  if (pos) {
    const core::Vec4 p = ldg4(pos + i);
    bad += !isfinite(p.x) + !isfinite(p.y) + !isfinite(p.z) + !isfinite(p.w);
    negative = p.w < 0.0f;
    differs = p.w != pos[0].w;
    offPlane = p.z != 0.0f;
  }
  if (vel) {
    const core::Vec4 v = ldg4(vel + i);
    bad += !isfinite(v.x) + !isfinite(v.y) + !isfinite(v.z);
    offPlane |= v.z != 0.0f;
  }
  if (bad) atomicAdd(counts, bad);
  if (negative) atomicAdd(counts + 1, 1u);
  if (differs) atomicAdd(counts + 2, 1u);
  if (offPlane) atomicAdd(counts + 3, 1u);
}

__global__ void packColumnsKernel(const float* __restrict__ src, int64_t rowStride, int64_t colStride, int cols,
                                  uint32_t n, float* __restrict__ dst, int first) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  for (int c = 0; c < cols; ++c)
    dst[size_t(i) * 4 + size_t(first + c)] = src[int64_t(i) * rowStride + int64_t(c) * colStride];
}

}  // namespace

void launchGatherById(const core::ConstBodyPointers& in, uint32_t n, const core::BodyPointers& out,
                      const LaunchConfig& lc) {
  if (n == 0) return;
  gatherByIdKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(in, n, out);
  MURMUR_CUDA_LAUNCH_CHECK();
}

void launchScatterById(const core::ConstBodyPointers& in, const uint32_t* d_id, uint32_t n,
                       const core::BodyPointers& out, const LaunchConfig& lc) {
  if (n == 0) return;
  scatterByIdKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(in, d_id, n, out);
  MURMUR_CUDA_LAUNCH_CHECK();
}

IdStateCheck checkIdState(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const LaunchConfig& lc) {
  IdStateCheck out;
  if (n == 0 || (!d_pos && !d_vel)) return out;
  DeviceBuffer<uint32_t> counts;
  counts.allocate(4);
  MURMUR_CUDA_CHECK(cudaMemsetAsync(counts.get(), 0, counts.bytes(), lc.stream));
  checkIdStateKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_pos, d_vel, n, counts.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  uint32_t h[4] = {0, 0, 0, 0};
  core::Vec4 first{};
  MURMUR_CUDA_CHECK(cudaMemcpyAsync(h, counts.get(), sizeof h, cudaMemcpyDeviceToHost, lc.stream));
  if (d_pos) MURMUR_CUDA_CHECK(cudaMemcpyAsync(&first, d_pos, sizeof first, cudaMemcpyDeviceToHost, lc.stream));
  MURMUR_CUDA_CHECK(cudaStreamSynchronize(lc.stream));
  out.nonFinite = h[0];
  out.negativeMass = h[1];
  out.offPlane = h[3];
  out.commonMass = d_pos && h[2] == 0 && first.w > 0.0f ? first.w : 0.0f;
  return out;
}

void launchPackColumns(const float* d_src, int64_t rowStride, int64_t colStride, int cols, uint32_t n,
                       core::Vec4* d_dst, int first, const LaunchConfig& lc) {
  if (n == 0 || cols <= 0) return;
  packColumnsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(d_src, rowStride, colStride, cols, n,
                                                                  reinterpret_cast<float*>(d_dst), first);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
