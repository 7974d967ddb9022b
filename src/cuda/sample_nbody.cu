// The sample's formulation, kept as published apart from the tail: float4 positions, one tile of
// blockDim bodies per iteration staged in shared memory, `#pragma unroll 128` on the tile loop,
// plain rsqrtf (this file is compiled without -ftz, as the sample is by default), softening added
// after the dot product, one body per thread. The sample assumes N is a multiple of the block;
// here the last tile is padded with zero-mass bodies so that any N runs.
#include "cuda/sample_nbody.h"

#include "cuda/cuda_check.h"
#include "cuda/device_buffer.h"

namespace murmur::cuda {

namespace {

__device__ float3 bodyBodyInteraction(float3 ai, float4 bi, float4 bj, float softeningSquared) {
  float3 r;
  r.x = bj.x - bi.x;
  r.y = bj.y - bi.y;
  r.z = bj.z - bi.z;
  float distSqr = r.x * r.x + r.y * r.y + r.z * r.z;
  distSqr += softeningSquared;
  const float invDist = rsqrtf(distSqr);
  const float invDistCube = invDist * invDist * invDist;
  const float s = bj.w * invDistCube;
  ai.x += r.x * s;
  ai.y += r.y * s;
  ai.z += r.z * s;
  return ai;
}

__global__ void sampleForcesKernel(const float4* __restrict__ pos, unsigned n, float softeningSquared, float G,
                                   float4* __restrict__ acc) {
  extern __shared__ float4 sharedPos[];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 bodyPos = i < n ? pos[i] : make_float4(0, 0, 0, 0);
  float3 a = {0.0f, 0.0f, 0.0f};
  for (unsigned tile = 0; tile * blockDim.x < n; ++tile) {
    const unsigned j = tile * blockDim.x + threadIdx.x;
    sharedPos[threadIdx.x] = j < n ? pos[j] : make_float4(0, 0, 0, 0);
    __syncthreads();
#pragma unroll 128
    for (unsigned counter = 0; counter < blockDim.x; counter++)
      a = bodyBodyInteraction(a, bodyPos, sharedPos[counter], softeningSquared);
    __syncthreads();
  }
  if (i < n) acc[i] = make_float4(a.x * G, a.y * G, a.z * G, 0.0f);
}

}  // namespace

struct SampleNbody::Impl {
  DeviceBuffer<float4> pos, acc;
  unsigned n = 0;
  float eps2 = 0, G = 0;
  int block = 256;
};

SampleNbody::SampleNbody(const std::vector<core::Vec4>& pos, float eps2, float G, int block) : impl_(new Impl) {
  static_assert(sizeof(core::Vec4) == sizeof(float4), "core::Vec4 is laid out as float4");
  Impl& m = *impl_;
  m.n = static_cast<unsigned>(pos.size());
  m.eps2 = eps2;
  m.G = G;
  m.block = block;
  m.pos.allocate(pos.size());
  m.acc.allocate(pos.size());
  MURMUR_CUDA_CHECK(cudaMemcpy(m.pos.get(), pos.data(), pos.size() * sizeof(float4), cudaMemcpyHostToDevice));
}

SampleNbody::~SampleNbody() = default;

void SampleNbody::computeForces() {
  const Impl& m = *impl_;
  const unsigned blocks = (m.n + unsigned(m.block) - 1) / unsigned(m.block);
  sampleForcesKernel<<<blocks, m.block, size_t(m.block) * sizeof(float4)>>>(m.pos.get(), m.n, m.eps2, m.G,
                                                                            m.acc.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  MURMUR_CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<core::Vec4> SampleNbody::accelerations() const {
  std::vector<core::Vec4> out(impl_->n);
  MURMUR_CUDA_CHECK(cudaMemcpy(out.data(), impl_->acc.get(), out.size() * sizeof(float4), cudaMemcpyDeviceToHost));
  return out;
}

}  // namespace murmur::cuda
