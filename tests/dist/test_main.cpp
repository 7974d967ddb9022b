// The dist tests run alone (one rank) and under mpirun (CTest starts them on 2 and 3 ranks). Every
// rank runs every test in the same order, since the engine's calls are collective; only rank 0
// prints, and rank 0 holds the one-rank reference the tests compare with.
#include <gtest/gtest.h>

#include <memory>

#include "dist/launch.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // MPI is initialised once per process: keep the world for the whole run, not per engine.
  std::shared_ptr<murmur::dist::MpiWorld> world;
  if (murmur::dist::haveMpi()) world = murmur::dist::MpiWorld::get();
  if (world && world->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  return RUN_ALL_TESTS();
}
