// The device-buffer transport: NCCL on the store's stream for bulk data; MPI for the unique id
// and the small host control data.
#pragma once

#include "dist/module_guard.h"

#include <cuda_runtime_api.h>

#include <memory>

#include "dist/launch.h"
#include "dist/transport.h"

namespace murmur::dist {

// The transport creates (and owns, so it outlives the store) the stream that every device store
// operation and every NCCL call of this rank runs on; *stream receives it.
std::unique_ptr<Transport> createNcclTransport(std::shared_ptr<MpiWorld> world, cudaStream_t* stream);

}  // namespace murmur::dist
