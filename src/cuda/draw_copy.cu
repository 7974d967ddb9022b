#include "cuda/draw_copy.h"

#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

namespace {

__global__ void __launch_bounds__(1024)
    drawCopyKernel(const core::ConstBodyPointers in, uint32_t n, const core::BodyPointers out) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  moveBody(out, i, in, i);
}

}  // namespace

void launchDrawCopy(const core::ConstBodyPointers& in, uint32_t n, const core::BodyPointers& out,
                    const LaunchConfig& lc) {
  if (n == 0) return;
  drawCopyKernel<<<lc.blocksFor(n), lc.block, 0, lc.stream>>>(in, n, out);
  MURMUR_CUDA_LAUNCH_CHECK();
}

}  // namespace murmur::cuda
