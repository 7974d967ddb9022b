// The sampled rows step's device side (RowsStepOut::sample): what a force kernel's thread adds per
// candidate beside the force's sums, the boid's sums of the sample, and the block's total of them.
// Included only by rows_kernels.cu (the force kernels); launchRowsNearestBeyond's search is in
// rows_search.cu.
#pragma once

#include "cuda/module_guard.h"

#include <cmath>
#include <cstdint>

#include "cuda/boid_pair.cuh"
#include "cuda/device_utils.cuh"
#include "cuda/observables.h"
#include "cuda/rows_kernels.h"

namespace murmur::cuda {

namespace {

// One boid's part of a sampled step (RowsStepOut::sample) beside the force's sums, which it does
// not change: the candidates within the separation radius (the boid itself included, as in the
// force's counts n1 and n3 until the rule's removeSelf) and the nearest other candidate, squared.
struct BoidSampleAcc {
  float nearest2 = INFINITY;
  float n2 = 0;  // exact: a count below 2^24
};

// What a sampled kernel's thread holds once its boid is done: the boid's sums, the counts apart
// (blockSampleAdd adds them as integers).
struct BoidSampleOut {
  double v[kNumBoidSums] = {};
  int counts[3] = {};  // the neighbours within the cohesion, separation and alignment radii
};

// Candidate d2 of a sampled boid. Only the boid's own row holds the boid itself (d2 = 0 exactly,
// sums relative to the boid), so only that row tests for it (OwnRowT); in every other row the
// nearest distance is one minimum per candidate.
template <bool SampleT, bool OwnRowT, typename SetupT>
__device__ __forceinline__ void sampleCandidate(BoidSampleAcc& s, float d2, bool self, const SetupT& r2) {
  if constexpr (SampleT) {
    if (d2 < r2.r2) s.n2 += 1.0f;  // under the force's own predicate: one add (an integer took a select too)
    if constexpr (OwnRowT)
      s.nearest2 = fminf(s.nearest2, self ? INFINITY : d2);
    else
      s.nearest2 = fminf(s.nearest2, d2);
  }
}

// A sampled boid's sums (cuda/observables.h BoidSum), as DeviceObserver's boids kernel forms
// them. acc has had the rule's removeSelf. A nearest candidate at or beyond the search radius (reach2)
// settles nothing: a boid closer than the radius would have been a candidate, but one farther
// may be nearer than every candidate, so the boid is listed for launchRowsNearestBeyond, with
// its nearest candidate's squared distance as an upper bound.
template <typename RelSumT, typename SetupT>
__device__ __forceinline__ void sampleBoid(const RelSumT& acc, const BoidSampleAcc& sa, uint32_t i,
                                           uint32_t n, const core::Vec4& vi, const SetupT& r2, float reach2,
                                           const BoidSampleSums& sample, BoidSampleOut& so) {
  setSpeedAndHeading(vi, so.v);
  so.counts[0] = acc.n1;
  so.counts[1] = static_cast<int>(sa.n2) - (0.0f < r2.r2 ? 1 : 0);
  so.counts[2] = acc.n3;
  if (n < 2) return;
  if (sa.nearest2 < reach2) {
    so.v[kNearest] = sqrt(double(sa.nearest2));
  } else {
    const uint32_t t = atomicAdd(sample.beyondCount, 1u);
    sample.beyond[t] = i;
    sample.beyondNearest2[t] = sa.nearest2;
  }
}

// The sum of v over the warp, in lane 0.
__device__ __forceinline__ int warpSum(int v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(kFullWarpMask, v);
#else
  for (int o = kWarpSize / 2; o > 0; o /= 2) v += __shfl_down_sync(kFullWarpMask, v, o);
  return v;
#endif
}

// The block's sums added into sums[0, kNumBoidSums): the doubles over shuffles, the counts as
// integers (one instruction a warp on sm_80 and later) and in double only per block.
__device__ __forceinline__ void blockSampleAdd(BoidSampleOut& so, double* __restrict__ sums) {
  static_assert(kNearest == 4 && kCount1 == 5 && kCount3 == 7 && kNumBoidSums == 8, "the doubles, then the counts");
  constexpr int kDoubles = kCount1;
  __shared__ double partial[kDoubles][kMaxWarpsPerBlock];
  __shared__ int partialCount[3][kMaxWarpsPerBlock];
  const int warp = threadIdx.x / kWarpSize, lane = threadIdx.x % kWarpSize;
#pragma unroll
  for (int k = 0; k < kDoubles; ++k)
    for (int o = kWarpSize / 2; o > 0; o /= 2) so.v[k] += __shfl_down_sync(kFullWarpMask, so.v[k], o);
  int counts[3];
#pragma unroll
  for (int c = 0; c < 3; ++c) counts[c] = warpSum(so.counts[c]);
  if (lane == 0) {
#pragma unroll
    for (int k = 0; k < kDoubles; ++k) partial[k][warp] = so.v[k];
#pragma unroll
    for (int c = 0; c < 3; ++c) partialCount[c][warp] = counts[c];
  }
  __syncthreads();
  if (threadIdx.x < kNumBoidSums) {  // lane k adds value k over the warps
    const int warps = (blockDim.x + kWarpSize - 1) / kWarpSize;
    double total = 0;
    if (threadIdx.x < kDoubles) {
      for (int w = 0; w < warps; ++w) total += partial[threadIdx.x][w];
    } else {
      long long c = 0;
      for (int w = 0; w < warps; ++w) c += partialCount[threadIdx.x - kDoubles][w];
      total = double(c);
    }
    atomicAdd(sums + threadIdx.x, total);
  }
}

// A sampled kernel lets launchRowsNearestBeyond's kernel start as soon as every block of it has
// started (programmatic dependent launch, sm_90): that kernel's blocks take the SMs the force
// kernel's last blocks leave, then wait for the whole force kernel (griddepcontrol.wait), so its
// launch overlaps the force kernel's tail instead of following it.
template <bool SampleT>
__device__ __forceinline__ void letTheSampleStart() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if constexpr (SampleT) asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// A sampled kernel's block total of its boids' sums (every thread of the block calls it).
template <bool SampleT>
__device__ __forceinline__ void addSample(BoidSampleOut& sampled, const RowsStepOut& out) {
  if constexpr (SampleT) blockSampleAdd(sampled, out.sample.sums);
}

}  // namespace

}  // namespace murmur::cuda
