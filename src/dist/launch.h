// How this process was started: alone, or as one of several ranks under mpirun. Works in every
// build, with or without MPI, so a build without MPI can still say that it was asked for ranks.
#pragma once

#include "dist/module_guard.h"

#include <memory>
#include <stdexcept>
#include <string>

#include "dist/transport.h"

namespace murmur::dist {

// Ranks the launcher started (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_SIZE...); 1 when started alone.
int launchedRanks();
// This process's rank among those the launcher started (0 when alone), and among those on this
// host (the GPU it takes).
int launchedRank();
int launchedLocalRank();
// Ranks the launcher started on this host (all of them when it does not say).
int launchedLocalRanks();

// True when this build can run several ranks (it found MPI at configure time).
bool haveMpi();

// The MPI world, initialised once per process; finalised when the last reference goes.
// Throws core::UsageError when this build has no MPI ("this build has no MPI ...").
class MpiWorld {
 public:
  static std::shared_ptr<MpiWorld> get();
  ~MpiWorld();
  int rank() const { return rank_; }
  int size() const { return size_; }
  int localRank() const { return localRank_; }

 private:
  MpiWorld();
  int rank_ = 0, size_ = 1, localRank_ = 0;
};

// Host-buffer transport over MPI_COMM_WORLD.
std::unique_ptr<Transport> createMpiTransport(std::shared_ptr<MpiWorld> world);

}  // namespace murmur::dist

namespace murmur::dist {

// A failure every rank of the job agreed on (each throws the same message, so only rank 0 needs
// to print it). status: the exit status (2 bad input or does not fit, 1 otherwise).
class JobError : public std::runtime_error {
 public:
  JobError(const std::string& what, int status) : std::runtime_error(what), status_(status) {}
  int status() const { return status_; }

 private:
  int status_;
};

// main's last word on an error. Alone: prints "murmur: <what>", returns status. Before MPI
// started, every rank fails the same way on the same command line: rank 0 prints and returns
// status, which mpirun makes the job's, and the other ranks return 0 quietly (a rank that exits
// non-zero first would have mpirun kill rank 0 before it could print); so also for bad input
// (status 2) once MPI runs, which comes from the same command line on every rank. Any other
// failure once MPI runs with several ranks may be one rank's alone: it prints
// "murmur: rank R: <what>" and ends the whole job, so no rank waits for it.
int reportError(const std::string& what, int status);

// The status a rank exits with for a failure every rank agreed on (JobError): rank 0's carries it.
inline int agreedExitStatus(int status) { return launchedRank() == 0 ? status : 0; }

// Collective: every rank passes its status (0 = fine) and what went wrong; when any failed,
// every rank throws JobError("rank R: what", status) for the first failed rank R.
void agreeOnFailure(int status, const std::string& what);

}  // namespace murmur::dist
