// The seam between the decomposition (dist_engine.cpp) and the wire. The decomposition decides
// what goes where; a Transport moves it. Two transports: plain MPI on host buffers (the CPU
// engine, and what CI tests), NCCL on device buffers (the CUDA engine). Small control data (counts,
// histograms, errors) always travels over MPI on the host.
#pragma once

#include "dist/module_guard.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace murmur::dist {

class Transport {
 public:
  virtual ~Transport() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // True when bulk buffers (alltoallv, allgatherv) are device pointers.
  virtual bool deviceBuffers() const = 0;
  // "mpi" or "nccl".
  virtual const char* name() const = 0;

  // Host control data, every rank calls with the same sizes.
  virtual void allreduceSum(uint64_t* values, size_t count) = 0;
  virtual void allreduceMax(double* values, size_t count) = 0;
  // out[p] = what rank p put at index rank() of its `perPeer`.
  virtual std::vector<uint64_t> alltoall(const std::vector<uint64_t>& perPeer) = 0;
  virtual std::vector<uint64_t> allgather(uint64_t value) = 0;
  // Every rank gets root's string.
  virtual std::string broadcast(const std::string& s, int root) = 0;
  // Host: values[i] = the minimum over every rank's values[i], on root (other ranks' values are
  // left undefined). Every rank calls with the same count.
  virtual void reduceMinToRoot(uint64_t* values, size_t count, int root) = 0;
  // The same minimum on a buffer in the transport's memory space (device buffers for NCCL): the
  // splat images of a frame over ranks.
  virtual void reduceMinBulk(uint64_t* values, size_t count, int root) = 0;
  // Host bulk data, as alltoallv but on the host for every transport (the start-up's bodies).
  virtual void alltoallvHost(const void* send, const std::vector<size_t>& sendBytes, void* recv,
                             const std::vector<size_t>& recvBytes) = 0;
  // Host bytes to root, packed in rank order (recvBytes[p] from rank p); recv is used on root only.
  virtual void gatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes,
                       int root) = 0;

  // Bulk data in the transport's memory space. Segments are packed in peer order: sendBytes[p]
  // bytes go to peer p, recvBytes[p] come from peer p (the caller exchanged the counts first).
  // Completes before returning as far as the caller's buffers are concerned (device transports
  // order it on their stream, which the caller's later work also uses).
  virtual void alltoallv(const void* send, const std::vector<size_t>& sendBytes, void* recv,
                         const std::vector<size_t>& recvBytes) = 0;
  // Every rank's `bytes` (recvBytes[p] from rank p) packed in rank order into recv on every rank.
  virtual void allgatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes) = 0;

  // Ends every rank of the job at once (a fatal error on one rank): no rank is left waiting.
  [[noreturn]] virtual void abortJob(int status) = 0;
};

// Byte offsets of packed segments: offsets[p] = sum of bytes[0..p).
inline std::vector<size_t> offsetsOf(const std::vector<size_t>& bytes) {
  std::vector<size_t> off(bytes.size() + 1, 0);
  for (size_t p = 0; p < bytes.size(); ++p) off[p + 1] = off[p] + bytes[p];
  return off;
}

}  // namespace murmur::dist
