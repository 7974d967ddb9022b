#include "cuda/cuda_check.h"

#include <sstream>

namespace murmur::cuda {

void throwCudaError(cudaError_t err, const char* expr, const char* file, int line) {
  std::ostringstream s;
  s << file << ':' << line << ": " << expr << " failed: " << cudaGetErrorName(err) << ": "
    << cudaGetErrorString(err);
  throw CudaError(s.str(), err);
}

}  // namespace murmur::cuda
