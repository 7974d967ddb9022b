// MPI host collectives shared by both transports (the NCCL one sends its control data over MPI
// too). Only files compiled with MPI include this.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace murmur::dist {

// Point-to-point exchange with every peer, in pieces below MPI's int counts: sendBytes[p] bytes
// from sendTo[p] to peer p, recvBytes[p] bytes from peer p into recvFrom[p]. Host memory.
void exchangeBytes(const std::vector<const char*>& sendTo, const std::vector<size_t>& sendBytes,
                   const std::vector<char*>& recvFrom, const std::vector<size_t>& recvBytes);

struct MpiControl {
  void allreduceSum(uint64_t* v, size_t n);
  void allreduceMax(double* v, size_t n);
  std::vector<uint64_t> alltoall(const std::vector<uint64_t>& perPeer);
  std::vector<uint64_t> allgather(uint64_t value);
  std::string broadcast(const std::string& s, int root);
  void gatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes, int root);
  [[noreturn]] void abortJob(int status);
};

}  // namespace murmur::dist
