// deviceAvailable: a device is usable when the driver answers, a device exists and this build
// carries code it can run (a real image for its architecture or PTX it can JIT). The last check
// turns "no kernel image" at the first launch into a clear reason up front.
#include <string>

#include <cuda_runtime.h>
#include <dlfcn.h>

#include "cuda/cuda_check.h"
#include "cuda/cuda_engine.h"

namespace murmur::cuda {

namespace {

__global__ void probeKernel() {}

// CUDA encodes versions as 1000 * major + 10 * minor.
std::string versionString(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

}  // namespace

bool deviceAvailable(std::string* why) {
  auto fail = [&](const std::string& reason) {
    if (why) *why = reason;
    cudaGetLastError();  // leave no sticky error behind for later calls
    return false;
  };
  try {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      // The runtime reports a missing driver as "driver version is insufficient": tell the two
      // apart by whether the driver library exists at all.
      void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
      if (driver == nullptr) return fail("no NVIDIA GPU or driver found (libcuda.so.1 is not installed)");
      dlclose(driver);
      if (err == cudaErrorNoDevice) return fail("no NVIDIA GPU found (the driver is installed)");
      return fail(std::string("the NVIDIA driver cannot run this build (") + cudaGetErrorString(err) + ")");
    }
    if (count == 0) return fail("no NVIDIA GPU found");
    cudaFuncAttributes attr{};
    err = cudaFuncGetAttributes(&attr, probeKernel);
    if (err != cudaSuccess) {
      return fail(std::string("the CUDA device cannot run this build (") + cudaGetErrorString(err) +
                  "): add its architecture to CMAKE_CUDA_ARCHITECTURES");
    }
    if (why) why->clear();
    return true;
  } catch (const std::exception& e) {
    return fail(e.what());
  }
}

core::DeviceInfo deviceInfo() {
  int dev = 0, driver = 0, runtime = 0;
  MURMUR_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  MURMUR_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  MURMUR_CUDA_CHECK(cudaDriverGetVersion(&driver));
  MURMUR_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  core::DeviceInfo info;
  info.name = prop.name;
  info.cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);
  info.driver = versionString(driver);
  info.runtime = versionString(runtime);
  return info;
}

}  // namespace murmur::cuda
