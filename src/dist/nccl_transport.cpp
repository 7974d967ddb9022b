#include "dist/nccl_transport.h"

#include <mpi.h>
#include <nccl.h>

#include <stdexcept>
#include <string>

#include "cuda/cuda_check.h"
#include "dist/mpi_world_access.h"

namespace murmur::dist {

namespace {

[[noreturn]] void throwNccl(ncclResult_t r, const char* expr, const char* file, int line) {
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " +
                           ncclGetErrorString(r));
}

#define MURMUR_NCCL_CHECK(expr)                                       \
  do {                                                                \
    const ncclResult_t murmurNcclErr_ = (expr);                       \
    if (murmurNcclErr_ != ncclSuccess)                                \
      throwNccl(murmurNcclErr_, #expr, __FILE__, __LINE__);           \
  } while (0)

class NcclTransport final : public MpiControlledTransport {
 public:
  explicit NcclTransport(std::shared_ptr<MpiWorld> w) : MpiControlledTransport(std::move(w)) {
    MURMUR_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    ncclUniqueId id{};
    if (world_->rank() == 0) MURMUR_NCCL_CHECK(ncclGetUniqueId(&id));
    if (MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD) != MPI_SUCCESS)
      throw std::runtime_error("MPI_Bcast of the NCCL id failed");
    MURMUR_NCCL_CHECK(ncclCommInitRank(&comm_, world_->size(), id, world_->rank()));
  }
  ~NcclTransport() override {
    if (comm_) ncclCommDestroy(comm_);
    if (stream_) cudaStreamDestroy(stream_);
  }
  cudaStream_t stream() const { return stream_; }

  bool deviceBuffers() const override { return true; }
  const char* name() const override { return "nccl"; }

  void alltoallv(const void* send, const std::vector<size_t>& sendBytes, void* recv,
                 const std::vector<size_t>& recvBytes) override {
    const std::vector<size_t> so = offsetsOf(sendBytes), ro = offsetsOf(recvBytes);
    MURMUR_NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < size(); ++p) {
      const size_t k = static_cast<size_t>(p);
      if (sendBytes[k])
        MURMUR_NCCL_CHECK(ncclSend(static_cast<const char*>(send) + so[k], sendBytes[k], ncclChar, p, comm_, stream_));
      if (recvBytes[k])
        MURMUR_NCCL_CHECK(ncclRecv(static_cast<char*>(recv) + ro[k], recvBytes[k], ncclChar, p, comm_, stream_));
    }
    MURMUR_NCCL_CHECK(ncclGroupEnd());
  }

  // In place: the root's buffer receives the minimum (NCCL allows sendbuff == recvbuff).
  void reduceMinBulk(uint64_t* v, size_t n, int root) override {
    if (n) MURMUR_NCCL_CHECK(ncclReduce(v, v, n, ncclUint64, ncclMin, root, comm_, stream_));
  }

  // One broadcast per rank in a group: segments may differ in size (N not a multiple of K).
  void allgatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes) override {
    const std::vector<size_t> ro = offsetsOf(recvBytes);
    bool equal = true;
    for (size_t b : recvBytes) equal = equal && b == recvBytes[0];
    if (equal) {
      MURMUR_NCCL_CHECK(ncclAllGather(send, recv, bytes, ncclChar, comm_, stream_));
      return;
    }
    MURMUR_NCCL_CHECK(ncclGroupStart());
    for (int r = 0; r < size(); ++r) {
      const size_t k = static_cast<size_t>(r);
      if (recvBytes[k] == 0) continue;
      MURMUR_NCCL_CHECK(ncclBroadcast(r == rank() ? send : nullptr, static_cast<char*>(recv) + ro[k], recvBytes[k],
                                      ncclChar, r, comm_, stream_));
    }
    MURMUR_NCCL_CHECK(ncclGroupEnd());
  }

  [[noreturn]] void abortJob(int status) override {
    if (comm_) ncclCommAbort(comm_), comm_ = nullptr;
    ctl_.abortJob(status);
  }

 private:
  cudaStream_t stream_ = nullptr;
  ncclComm_t comm_ = nullptr;
};

}  // namespace

std::unique_ptr<Transport> createNcclTransport(std::shared_ptr<MpiWorld> world, cudaStream_t* stream) {
  auto t = std::make_unique<NcclTransport>(std::move(world));
  *stream = t->stream();
  return t;
}

}  // namespace murmur::dist
