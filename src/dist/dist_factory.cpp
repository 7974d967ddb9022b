#include "dist/dist_factory.h"

#include <stdexcept>
#include <string>

#include "core/errors.h"
#include "dist/dist_engine.h"
#include "dist/launch.h"
#if defined(MURMUR_HAVE_NCCL)
#include <cuda_runtime_api.h>

#include "dist/device_store.h"
#include "dist/nccl_transport.h"
#endif

namespace murmur::dist {

std::unique_ptr<core::Engine> createDistEngine(core::EngineKind kind, const core::SimParams& p) {
  std::shared_ptr<MpiWorld> world = MpiWorld::get();  // throws UsageError without MPI
  {
    // Same parameters on every rank, so every rank reaches the same verdict.
    const std::string err = validateDistParams(p, world->size());
    if (!err.empty()) throw std::invalid_argument(err);
  }
  if (kind == core::EngineKind::Cpu)
    return std::make_unique<DistEngine>(createMpiTransport(world), createHostStore(p), p);
#if defined(MURMUR_HAVE_NCCL)
  // One GPU per rank on each host, by local rank.
  int status = 0;
  std::string what;
  int devices = 0;
  const cudaError_t e = cudaGetDeviceCount(&devices);
  if (e != cudaSuccess) {
    status = 2, what = std::string("--engine cuda: no CUDA device (") + cudaGetErrorString(e) + ")";
  } else if (world->localRank() >= devices) {
    status = 2, what = "--engine cuda: local rank " + std::to_string(world->localRank()) + " has no GPU (this host has " +
                       std::to_string(devices) + "; start at most that many ranks per host)";
  } else if (cudaSetDevice(world->localRank()) != cudaSuccess) {
    status = 1, what = "cudaSetDevice(" + std::to_string(world->localRank()) + ") failed";
  }
  agreeOnFailure(status, what);
  cudaStream_t stream = nullptr;
  std::unique_ptr<Transport> transport;
  try {
    transport = createNcclTransport(world, &stream);
  } catch (const std::exception& ex) {
    status = 1, what = std::string("NCCL: ") + ex.what();
  }
  agreeOnFailure(status, what);
  return std::make_unique<DistEngine>(std::move(transport), createDeviceStore(p, stream), p);
#else
  throw core::UsageError("--engine cuda over several ranks needs NCCL and the CUDA engine; this build has " +
                         std::string(haveMpi() ? "no NCCL" : "neither") + " (use --engine cpu)");
#endif
}

}  // namespace murmur::dist
