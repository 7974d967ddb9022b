#include "cuda/random_draws.h"

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

namespace {

__global__ void __launch_bounds__(1024)
    bodyDrawsKernel(uint64_t seed, uint64_t step, uint32_t index, const uint32_t* __restrict__ id, uint32_t n,
                    core::Draw4* __restrict__ out) {
  const uint32_t k = globalThreadIndex();
  if (k < n) out[k] = core::bodyDraw(seed, id[k], step, index);
}

}  // namespace

void launchBodyDraws(uint64_t seed, uint64_t step, uint32_t index, const uint32_t* d_id, uint32_t n,
                     core::Draw4* d_out, const LaunchConfig& lc) {
  if (n == 0) return;
  bodyDrawsKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(seed, step, index, d_id, n, d_out);
  MURMUR_CUDA_LAUNCH_CHECK();
}

std::vector<core::Draw4> bodyDrawsOnDevice(uint64_t seed, uint64_t step, uint32_t index,
                                           const std::vector<uint32_t>& ids) {
  const uint32_t n = static_cast<uint32_t>(ids.size());
  std::vector<core::Draw4> out(n);
  if (n == 0) return out;
  DeviceBuffer<uint32_t> d_id;
  DeviceBuffer<core::Draw4> d_out;
  d_id.allocate(n);
  d_out.allocate(n);
  MURMUR_CUDA_CHECK(cudaMemcpy(d_id.get(), ids.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
  launchBodyDraws(seed, step, index, d_id.get(), n, d_out.get(), LaunchConfig{256, nullptr});
  MURMUR_CUDA_CHECK(cudaMemcpy(out.data(), d_out.get(), n * sizeof(core::Draw4), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace murmur::cuda
