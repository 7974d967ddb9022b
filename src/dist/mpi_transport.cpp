// MPI: the world (init, ranks, the local rank that picks the GPU) and the host-buffer transport.
// Bulk data goes point to point in pieces below MPI's int counts, so a 100M-body gather works.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "dist/launch.h"
#include "dist/mpi_world_access.h"

namespace murmur::dist {

bool haveMpi() { return true; }

int reportError(const std::string& what, int status) {
  int ready = 0, done = 0, size = 1, rank = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  if (ready && !done) {
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  // Bad input (status 2) comes from the command line and the parameters, the same on every rank;
  // checks that can differ between ranks (memory, devices) are agreed on before they throw.
  if (size > 1 && status != 2) {
    std::fprintf(stderr, "murmur: rank %d: %s\n", rank, what.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, status);
  }
  if (launchedRank() != 0) return 0;
  std::fprintf(stderr, "murmur: %s\n", what.c_str());
  return status;
}

namespace {

std::mutex worldMutex;
std::weak_ptr<MpiWorld> worldRef;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    throw std::runtime_error(std::string(what) + ": " + std::string(msg, static_cast<size_t>(len)));
  }
}

constexpr size_t kPieceBytes = size_t(1) << 30;  // below INT_MAX bytes per MPI message

}  // namespace

std::shared_ptr<MpiWorld> MpiWorld::get() {
  std::lock_guard<std::mutex> lock(worldMutex);
  if (auto w = worldRef.lock()) return w;
  std::shared_ptr<MpiWorld> w(new MpiWorld());
  worldRef = w;
  return w;
}

MpiWorld::MpiWorld() {
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) check(MPI_Init(nullptr, nullptr), "MPI_Init");
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  // Ranks sharing a host (and so its GPUs) get local ranks 0, 1, ... in world-rank order.
  MPI_Comm local;
  check(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &local),
        "MPI_Comm_split_type");
  MPI_Comm_rank(local, &localRank_);
  MPI_Comm_free(&local);
}

MpiWorld::~MpiWorld() {
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void exchangeBytes(const std::vector<const char*>& sendTo, const std::vector<size_t>& sendBytes,
                   const std::vector<char*>& recvFrom, const std::vector<size_t>& recvBytes) {
  std::vector<MPI_Request> req;
  const int peers = static_cast<int>(sendBytes.size());
  for (int p = 0; p < peers; ++p)
    for (size_t off = 0; off < recvBytes[static_cast<size_t>(p)]; off += kPieceBytes) {
      req.emplace_back();
      const int len = static_cast<int>(std::min(kPieceBytes, recvBytes[static_cast<size_t>(p)] - off));
      check(MPI_Irecv(recvFrom[static_cast<size_t>(p)] + off, len, MPI_BYTE, p, 7, MPI_COMM_WORLD, &req.back()),
            "MPI_Irecv");
    }
  for (int p = 0; p < peers; ++p)
    for (size_t off = 0; off < sendBytes[static_cast<size_t>(p)]; off += kPieceBytes) {
      req.emplace_back();
      const int len = static_cast<int>(std::min(kPieceBytes, sendBytes[static_cast<size_t>(p)] - off));
      check(MPI_Isend(sendTo[static_cast<size_t>(p)] + off, len, MPI_BYTE, p, 7, MPI_COMM_WORLD, &req.back()),
            "MPI_Isend");
    }
  check(MPI_Waitall(static_cast<int>(req.size()), req.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

void agreeOnFailure(int status, const std::string& what) {
  MpiControl ctl;
  const std::vector<uint64_t> all = ctl.allgather(static_cast<uint64_t>(status));
  for (size_t r = 0; r < all.size(); ++r) {
    if (all[r] == 0) continue;
    const std::string msg = ctl.broadcast(what, static_cast<int>(r));
    throw JobError("rank " + std::to_string(r) + ": " + msg, static_cast<int>(all[r]));
  }
}

void MpiControl::allreduceSum(uint64_t* v, size_t n) {
  check(MPI_Allreduce(MPI_IN_PLACE, v, static_cast<int>(n), MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
}
void MpiControl::allreduceMax(double* v, size_t n) {
  check(MPI_Allreduce(MPI_IN_PLACE, v, static_cast<int>(n), MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
}
std::vector<uint64_t> MpiControl::alltoall(const std::vector<uint64_t>& perPeer) {
  std::vector<uint64_t> out(perPeer.size());
  check(MPI_Alltoall(perPeer.data(), 1, MPI_UINT64_T, out.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Alltoall");
  return out;
}
std::vector<uint64_t> MpiControl::allgather(uint64_t value) {
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<uint64_t> out(static_cast<size_t>(size));
  check(MPI_Allgather(&value, 1, MPI_UINT64_T, out.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD), "MPI_Allgather");
  return out;
}
std::string MpiControl::broadcast(const std::string& s, int root) {
  uint64_t len = s.size();
  check(MPI_Bcast(&len, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast");
  std::string out = s;
  out.resize(len);
  if (len) check(MPI_Bcast(&out[0], static_cast<int>(len), MPI_CHAR, root, MPI_COMM_WORLD), "MPI_Bcast");
  return out;
}
void MpiControl::gatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes, int root) {
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const size_t peers = static_cast<size_t>(size);
  std::vector<const char*> sendTo(peers, nullptr);
  std::vector<size_t> sendBytes(peers, 0), inBytes(peers, 0);
  std::vector<char*> recvFrom(peers, nullptr);
  if (rank == root) {
    const std::vector<size_t> off = offsetsOf(recvBytes);
    for (size_t p = 0; p < peers; ++p) {
      recvFrom[p] = static_cast<char*>(recv) + off[p];
      inBytes[p] = recvBytes[p];
    }
  }
  sendTo[static_cast<size_t>(root)] = static_cast<const char*>(send);
  sendBytes[static_cast<size_t>(root)] = bytes;
  exchangeBytes(sendTo, sendBytes, recvFrom, inBytes);
}
void MpiControl::abortJob(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::abort();
}

namespace {

class MpiTransport final : public MpiControlledTransport {
 public:
  using MpiControlledTransport::MpiControlledTransport;
  bool deviceBuffers() const override { return false; }
  const char* name() const override { return "mpi"; }
  void alltoallv(const void* send, const std::vector<size_t>& sendBytes, void* recv,
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
  void allgatherv(const void* send, size_t bytes, void* recv, const std::vector<size_t>& recvBytes) override {
    const size_t peers = recvBytes.size();
    const std::vector<size_t> ro = offsetsOf(recvBytes);
    std::vector<const char*> to(peers, static_cast<const char*>(send));
    std::vector<size_t> sendBytes(peers, bytes);
    std::vector<char*> from(peers);
    for (size_t p = 0; p < peers; ++p) from[p] = static_cast<char*>(recv) + ro[p];
    // Our own segment is copied, not sent to ourselves.
    const size_t me = static_cast<size_t>(rank());
    if (bytes) std::memcpy(from[me], send, bytes);
    sendBytes[me] = 0;
    std::vector<size_t> inBytes = recvBytes;
    inBytes[me] = 0;
    exchangeBytes(to, sendBytes, from, inBytes);
  }
};

}  // namespace

std::unique_ptr<Transport> createMpiTransport(std::shared_ptr<MpiWorld> world) {
  return std::make_unique<MpiTransport>(std::move(world));
}

}  // namespace murmur::dist
