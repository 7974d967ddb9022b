// MPI: the world (init, ranks, the local rank that picks the GPU) and the host-buffer transport.
// Bulk data goes point to point in pieces below MPI's int counts, so a 100M-body gather works.
#include <mpi.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <mutex>
#include <stdexcept>

#include "dist/launch.h"
#include "dist/mpi_world_access.h"

namespace murmur::dist {

bool haveMpi() { return true; }

namespace {

// When one rank ends without the others agreeing to (killed, crashed, or a failure outside the
// agreed steps that it can only answer with MPI_Abort), mpirun stops the job: SIGTERM to every
// other rank, SIGKILL a second later. The ranks of one host share a slot each (an MPI shared
// window made at start) holding their process id and, once a rank gives up, its cause. On that
// SIGTERM, rank 0 reads the slots and says in one line which rank ended and why; started with
// `mpirun --quiet`, that line is all the user sees. Everything the handler does is async-signal-safe.
struct RankSlot {
  int state;  // kRunning, kReported (cause below), kFinished (left through MPI_Finalize)
  int status;
  int worldRank;
  pid_t pid;
  char what[496];
};
constexpr int kRunning = 0, kReported = 1, kFinished = 2;
constexpr int kMaxLocalRanks = 256;

MPI_Win slotWindow = MPI_WIN_NULL;
RankSlot* slots[kMaxLocalRanks];
int numLocal = 0, myLocal = 0;

RankSlot* mySlot() { return numLocal > 0 ? slots[myLocal] : nullptr; }
int stateOf(const RankSlot* s) { return __atomic_load_n(&s->state, __ATOMIC_ACQUIRE); }
void setState(RankSlot* s, int state) { __atomic_store_n(&s->state, state, __ATOMIC_RELEASE); }
bool alive(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }
bool rankZeroHere() { return numLocal > 0 && slots[0]->worldRank == 0; }

void append(char* buf, size_t& at, const char* s) {
  while (*s && at + 1 < 640) buf[at++] = *s++;
}
void appendInt(char* buf, size_t& at, int v) {
  char digits[12];
  int k = 0;
  do digits[k++] = static_cast<char>('0' + v % 10), v /= 10;
  while (v > 0 && k < 11);
  while (k > 0 && at + 1 < 640) buf[at++] = digits[--k];
}

extern "C" void onJobStopped(int) {
  const int savedErrno = errno;
  RankSlot* me = mySlot();
  if (!me || stateOf(me) != kRunning) _exit(1);  // this rank has said or done its part
  int reported = -1, vanished = -1;
  for (int j = 0; j < numLocal; ++j) {
    const int st = stateOf(slots[j]);
    if (st == kReported && reported < 0) reported = j;
    if (st == kRunning && j != myLocal && !alive(slots[j]->pid) && vanished < 0) vanished = j;
  }
  // Rank 0 speaks; if rank 0 itself vanished, the lowest rank still running on its host does.
  bool speak = me->worldRank == 0;
  if (!speak && rankZeroHere() && vanished == 0) {
    speak = true;
    for (int j = 1; j < myLocal; ++j) speak = speak && !(stateOf(slots[j]) == kRunning && alive(slots[j]->pid));
  }
  if (speak) {
    char line[640];
    size_t at = 0;
    append(line, at, "murmur: ");
    if (reported >= 0) {
      // Rank 0 reports its own failures itself; this is another rank's cause.
      append(line, at, "rank ");
      appendInt(line, at, slots[reported]->worldRank);
      append(line, at, ": ");
      append(line, at, slots[reported]->what);
    } else if (vanished >= 0) {
      append(line, at, "rank ");
      appendInt(line, at, slots[vanished]->worldRank);
      append(line, at, " ended unexpectedly (killed by a signal, or crashed); the job was stopped");
    } else {
      append(line, at, "the job was stopped by mpirun (a rank on another host ended, or mpirun was interrupted)");
    }
    line[at++] = '\n';
    ssize_t unused = write(STDERR_FILENO, line, at);
    (void)unused;
  } else {
    // Stay alive a moment, so that the rank that speaks does not take this one for the lost one.
    timespec pause{0, 300 * 1000 * 1000};
    nanosleep(&pause, nullptr);
  }
  errno = savedErrno;
  _exit(1);
}

// Collective over the ranks of one host: the slots and the handler (several ranks only).
void watchLocalRanks(MPI_Comm local, int worldRank) {
  int n = 0, me = 0;
  MPI_Comm_size(local, &n);
  MPI_Comm_rank(local, &me);
  if (n > kMaxLocalRanks) return;  // more ranks on one host than slots: mpirun's own messages
  RankSlot* mine = nullptr;
  if (MPI_Win_allocate_shared(sizeof(RankSlot), 1, MPI_INFO_NULL, local, &mine, &slotWindow) != MPI_SUCCESS) return;
  std::memset(mine, 0, sizeof(RankSlot));
  mine->worldRank = worldRank;
  mine->pid = getpid();
  for (int j = 0; j < n; ++j) {
    MPI_Aint bytes = 0;
    int unit = 0;
    MPI_Win_shared_query(slotWindow, j, &bytes, &unit, &slots[j]);
  }
  MPI_Barrier(local);  // every slot is filled in before anyone reads one
  numLocal = n, myLocal = me;
  struct sigaction sa {};
  sa.sa_handler = onJobStopped;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, nullptr);
}

void unwatchLocalRanks() {
  if (numLocal == 0) return;
  signal(SIGTERM, SIG_DFL);
  setState(mySlot(), kFinished);
  numLocal = 0;
  MPI_Win_free(&slotWindow);
}

}  // namespace

int reportError(const std::string& what, int status) {
  int ready = 0, done = 0, size = 1, rank = 0;
  MPI_Initialized(&ready);
  MPI_Finalized(&done);
  if (ready && !done) {
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  }
  // Bad input (status 2) comes from the command line and the parameters, the same on every rank;
  // checks that can differ between ranks (memory, devices) are agreed on before they throw. What
  // is left is one rank's alone: it leaves its cause for rank 0 (see onJobStopped) and ends the job.
  if (size > 1 && status != 2) {
    if (RankSlot* me = mySlot()) {
      std::snprintf(me->what, sizeof me->what, "%s", what.c_str());
      me->status = status;
      setState(me, kReported);
    }
    if (rank == 0 || !rankZeroHere()) {
      std::fprintf(stderr, "murmur: rank %d: %s\n", rank, what.c_str());
      std::fflush(stderr);
    }
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
  if (size_ > 1) watchLocalRanks(local, rank_);
  MPI_Comm_free(&local);
}

MpiWorld::~MpiWorld() {
  int done = 0;
  MPI_Finalized(&done);
  if (done) return;
  unwatchLocalRanks();
  MPI_Finalize();
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
void MpiControl::reduceMinToRoot(uint64_t* v, size_t n, int root) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  // In pieces below MPI's int counts.
  constexpr size_t kPiece = size_t(1) << 28;
  for (size_t at = 0; at < n; at += kPiece) {
    const int count = static_cast<int>(std::min(kPiece, n - at));
    check(MPI_Reduce(rank == root ? MPI_IN_PLACE : v + at, v + at, count, MPI_UINT64_T, MPI_MIN, root, MPI_COMM_WORLD),
          "MPI_Reduce");
  }
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
  void reduceMinBulk(uint64_t* v, size_t n, int root) override { ctl_.reduceMinToRoot(v, n, root); }
  void alltoallv(const void* send, const std::vector<size_t>& sendBytes, void* recv,
                 const std::vector<size_t>& recvBytes) override {
    alltoallvHost(send, sendBytes, recv, recvBytes);
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
