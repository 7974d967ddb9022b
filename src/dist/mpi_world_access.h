// MPI host collectives shared by both transports (the NCCL one sends its control data over MPI
// too). Only files compiled with MPI include this.
#pragma once

#include "dist/module_guard.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dist/launch.h"
#include "dist/transport.h"

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
  void reduceMinToRoot(uint64_t* v, size_t n, int root);
  void gatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes, int root);
  [[noreturn]] void abortJob(int status);
};

// What both transports share: the ranks come from the MPI world and the control data travels over
// MPI on the host. Subclasses move the bulk data (and may release their own resources before
// aborting).
class MpiControlledTransport : public Transport {
 public:
  explicit MpiControlledTransport(std::shared_ptr<MpiWorld> w) : world_(std::move(w)) {}
  int rank() const override { return world_->rank(); }
  int size() const override { return world_->size(); }
  void allreduceSum(uint64_t* v, size_t n) override { ctl_.allreduceSum(v, n); }
  void allreduceMax(double* v, size_t n) override { ctl_.allreduceMax(v, n); }
  std::vector<uint64_t> alltoall(const std::vector<uint64_t>& p) override { return ctl_.alltoall(p); }
  std::vector<uint64_t> allgather(uint64_t v) override { return ctl_.allgather(v); }
  std::string broadcast(const std::string& s, int root) override { return ctl_.broadcast(s, root); }
  void reduceMinToRoot(uint64_t* v, size_t n, int root) override { ctl_.reduceMinToRoot(v, n, root); }
  void gatherv(const void* s, size_t b, void* r, const std::vector<size_t>& rb, int root) override {
    ctl_.gatherv(s, b, r, rb, root);
  }
  void alltoallvHost(const void* send, const std::vector<size_t>& sendBytes, void* recv,
                     const std::vector<size_t>& recvBytes) override {
    const size_t peers = sendBytes.size();
    const std::vector<size_t> so = offsetsOf(sendBytes), ro = offsetsOf(recvBytes);
    std::vector<const char*> to(peers);
    std::vector<char*> from(peers);
    for (size_t p = 0; p < peers; ++p) {
      to[p] = static_cast<const char*>(send) + so[p];
      from[p] = static_cast<char*>(recv) + ro[p];
    }
    exchangeBytes(to, sendBytes, from, recvBytes);
  }
  [[noreturn]] void abortJob(int status) override { ctl_.abortJob(status); }

 protected:
  std::shared_ptr<MpiWorld> world_;
  MpiControl ctl_;
};

}  // namespace murmur::dist
