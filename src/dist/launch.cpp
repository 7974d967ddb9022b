#include "dist/launch.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/errors.h"

namespace murmur::dist {

namespace {

// Open MPI, then the PMI/PMIx names other launchers (MPICH's hydra, Slurm's srun) set.
int envInt(const char* const* names, int fallback) {
  for (const char* const* n = names; *n; ++n) {
    const char* v = std::getenv(*n);
    if (v && *v) return std::atoi(v);
  }
  return fallback;
}

}  // namespace

int launchedRanks() {
  static const char* const names[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_NTASKS", nullptr};
  const int n = envInt(names, 1);
  return n > 0 ? n : 1;
}

int launchedRank() {
  static const char* const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", nullptr};
  return envInt(names, 0);
}

int launchedLocalRank() {
  static const char* const names[] = {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID", nullptr};
  return envInt(names, 0);
}

int launchedLocalRanks() {
  static const char* const names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", nullptr};
  const int n = envInt(names, launchedRanks());
  return n > 0 ? n : launchedRanks();
}

#if !defined(MURMUR_HAVE_MPI)
bool haveMpi() { return false; }

void agreeOnFailure(int status, const std::string& what) {
  if (status != 0) throw JobError(what, status);
}

int reportError(const std::string& what, int status) {
  if (launchedRank() != 0) return 0;
  std::fprintf(stderr, "murmur: %s\n", what.c_str());
  return status;
}

std::shared_ptr<MpiWorld> MpiWorld::get() {
  throw core::UsageError("started as " + std::to_string(launchedRanks()) +
                         " ranks, but this build has no MPI: install libopenmpi-dev and re-run CMake");
}
MpiWorld::MpiWorld() = default;
MpiWorld::~MpiWorld() = default;

std::unique_ptr<Transport> createMpiTransport(std::shared_ptr<MpiWorld>) {
  throw core::UsageError("this build has no MPI: install libopenmpi-dev and re-run CMake");
}
#endif

}  // namespace murmur::dist
