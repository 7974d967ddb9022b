// The gravity observables on the GPU (cuda/gravity_observables.h).
#include "cuda/gravity_observables.h"

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <vector>

#include "cuda/cuda_check.h"
#include "cuda/device_utils.cuh"

namespace murmur::cuda {

using core::Obs;
using core::Vec4;

namespace {

// The sums one sample adds up on the device (doubles).
enum Sum { kMass, kKinetic, kRx, kRy, kRz, kPx, kPy, kPz, kLx, kLy, kLz, kPotential, kLag10, kLag50, kLag90, kNumSums };

__global__ void gravitySumsKernel(const Vec4* __restrict__ pos, const Vec4* __restrict__ vel, uint32_t n, double* sums) {
  const uint32_t i = globalThreadIndex();
  double v[11] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  if (i < n) {
    const Vec4 p = ldg4(pos + i), u = ldg4(vel + i);
    const double m = p.w, x = p.x, y = p.y, z = p.z, vx = u.x, vy = u.y, vz = u.z;
    v[0] = m, v[1] = 0.5 * m * (vx * vx + vy * vy + vz * vz);
    v[2] = m * x, v[3] = m * y, v[4] = m * z;
    v[5] = m * vx, v[6] = m * vy, v[7] = m * vz;
    v[8] = m * (y * vz - z * vy), v[9] = m * (z * vx - x * vz), v[10] = m * (x * vy - y * vx);
  }
  blockAtomicAdd<11>(v, sums + kMass);
}

// W = -G/2 sum_i m_i sum_{j != i} m_j / sqrt(r^2 + eps^2): each pair in float, each tile's sum
// added to a per-body double.
__global__ void potentialKernel(const Vec4* __restrict__ pos, uint32_t n, float eps2, double G, double* sums) {
  extern __shared__ Vec4 tile[];
  const uint32_t i = globalThreadIndex();
  const Vec4 pi = i < n ? ldg4(pos + i) : Vec4{0, 0, 0, 0};
  double phi = 0;
  for (uint32_t base = 0; base < n; base += blockDim.x) {
    const uint32_t j = base + threadIdx.x;
    tile[threadIdx.x] = j < n ? ldg4(pos + j) : Vec4{0, 0, 0, 0};
    __syncthreads();
    float t = 0;
    const uint32_t count = min(uint32_t(blockDim.x), n - base);
    for (uint32_t q = 0; q < count; ++q) {
      if (base + q == i) continue;
      const Vec4 pj = tile[q];
      const float dx = pj.x - pi.x, dy = pj.y - pi.y, dz = pj.z - pi.z;
      t += pj.w * rsqrtf(dx * dx + dy * dy + dz * dz + eps2);
    }
    phi += t;
    __syncthreads();
  }
  double v[1] = {i < n ? -0.5 * G * double(pi.w) * phi : 0.0};
  blockAtomicAdd<1>(v, sums + kPotential);
}

__global__ void radiusKernel(const Vec4* __restrict__ pos, uint32_t n, double cx, double cy, double cz, float* r,
                             float* m) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const Vec4 p = ldg4(pos + i);
  const double dx = p.x - cx, dy = p.y - cy, dz = p.z - cz;
  r[i] = float(sqrt(dx * dx + dy * dy + dz * dz));
  m[i] = p.w;
}

__global__ void toDoubleKernel(const float* __restrict__ m, uint32_t n, double* out) {
  const uint32_t i = globalThreadIndex();
  if (i < n) out[i] = m[i];
}

// The first sorted body at which the cumulative mass reaches each fraction of the total (within
// core::kLagrangeSlack, as the CPU reference).
__global__ void lagrangeKernel(const float* __restrict__ r, const double* __restrict__ cum, uint32_t n, double* sums) {
  const uint32_t i = globalThreadIndex();
  if (i >= n) return;
  const double total = cum[n - 1] * core::kLagrangeSlack, prev = i > 0 ? cum[i - 1] : 0.0;
  const double fr[3] = {0.1, 0.5, 0.9};
  for (int f = 0; f < 3; ++f)
    if (prev < fr[f] * total && cum[i] >= fr[f] * total) sums[kLag10 + f] = r[i];
}

}  // namespace

void GravityObserver::ensure(size_t n) {
  if (sums_.size() == 0) sums_.allocate(kNumSums);
  if (n <= n_) return;
  for (auto* b : {&radius_[0], &radius_[1], &mass_[0], &mass_[1]}) b->allocate(n);
  massIn_.allocate(n), cum_.allocate(n);
  n_ = n;
}

void GravityObserver::observe(const core::DeviceAccess::Bodies& b, const core::SimParams& p,
                              const core::ObserveRequest& req, const LaunchConfig& lc, core::Observables& out) {
  const uint32_t n = static_cast<uint32_t>(b.n);
  ensure(n);
  cudaStream_t stream = lc.stream;
  const unsigned blocks = lc.blocksFor(n);
  MURMUR_CUDA_CHECK(cudaMemsetAsync(sums_.get(), 0, sums_.bytes(), stream));
  std::vector<double> sums(kNumSums);
  const auto download = [&] {
    MURMUR_CUDA_CHECK(cudaMemcpyAsync(sums.data(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost, stream));
    MURMUR_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  gravitySumsKernel<<<blocks, lc.block, 0, stream>>>(b.pos, b.vel, n, sums_.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  const bool exact = n <= req.potentialMaxN;
  if (exact) {
    const double eps = p.gravity.softening;
    potentialKernel<<<blocks, lc.block, lc.block * sizeof(Vec4), stream>>>(b.pos, n, float(eps * eps), p.gravity.G,
                                                                           sums_.get());
    MURMUR_CUDA_LAUNCH_CHECK();
  }
  download();
  const double m = sums[kMass];
  const double cx = sums[kRx] / m, cy = sums[kRy] / m, cz = sums[kRz] / m;
  radiusKernel<<<blocks, lc.block, 0, stream>>>(b.pos, n, cx, cy, cz, radius_[0].get(), mass_[0].get());
  MURMUR_CUDA_LAUNCH_CHECK();
  cub::DoubleBuffer<float> keys(radius_[0].get(), radius_[1].get()), vals(mass_[0].get(), mass_[1].get());
  size_t sortBytes = 0, scanBytes = 0;
  MURMUR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, keys, vals, static_cast<int>(n)));
  MURMUR_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, scanBytes, massIn_.get(), cum_.get(), static_cast<int>(n)));
  ensureTemp(std::max(sortBytes, scanBytes));
  MURMUR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp_.get(), sortBytes, keys, vals, static_cast<int>(n), 0,
                                                    int(sizeof(float) * 8), stream));
  MURMUR_CUDA_LAUNCH_CHECK();
  toDoubleKernel<<<blocks, lc.block, 0, stream>>>(vals.Current(), n, massIn_.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  MURMUR_CUDA_CHECK(cub::DeviceScan::InclusiveSum(temp_.get(), scanBytes, massIn_.get(), cum_.get(),
                                                  static_cast<int>(n), stream));
  MURMUR_CUDA_LAUNCH_CHECK();
  lagrangeKernel<<<blocks, lc.block, 0, stream>>>(keys.Current(), cum_.get(), n, sums_.get());
  MURMUR_CUDA_LAUNCH_CHECK();
  download();
  out[Obs::Mass] = m;
  out[Obs::Kinetic] = sums[kKinetic];
  out[Obs::ComX] = cx, out[Obs::ComY] = cy, out[Obs::ComZ] = cz;
  out[Obs::MomentumX] = sums[kPx], out[Obs::MomentumY] = sums[kPy], out[Obs::MomentumZ] = sums[kPz];
  out[Obs::AngularMomentumX] = sums[kLx], out[Obs::AngularMomentumY] = sums[kLy], out[Obs::AngularMomentumZ] = sums[kLz];
  if (exact) {
    const double w = sums[kPotential];
    out[Obs::Potential] = w;
    out[Obs::TotalEnergy] = sums[kKinetic] + w;
    if (w != 0) out[Obs::VirialRatio] = 2.0 * sums[kKinetic] / std::fabs(w);
  }
  out[Obs::Lagrange10] = sums[kLag10], out[Obs::Lagrange50] = sums[kLag50], out[Obs::Lagrange90] = sums[kLag90];
}

}  // namespace murmur::cuda
