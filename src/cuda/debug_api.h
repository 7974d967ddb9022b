// Inspection hooks for tests: the grid the engine builds, and a way to leave the device short of
// memory. The simulator itself only uses deviceFreeBytes.
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/grid.h"
#include "cuda/cuda_engine.h"

namespace murmur::cuda {

// The grid of the current state, as a step would build it (boids grid or gravity bounding-box
// grid, by the current force mode) but without reordering the bodies.
struct GridSnapshot {
  core::GridSpec grid{};                 // read back from the device
  std::vector<core::Vec4> pos;           // positions in the engine's current order
  std::vector<uint32_t> id;              // ids in the engine's current order
  std::vector<uint32_t> sortedKeys;      // cell key per sorted slot
  std::vector<uint32_t> sortedIndex;     // index into pos per sorted slot
  std::vector<uint32_t> cellStart;       // per cell: first slot or kEmptyCell
  std::vector<uint32_t> cellEnd;         // per cell: one past the last slot or kEmptyCell
  std::vector<core::Vec4> monopole;      // gravity only: per cell centre of mass, w = mass
};

// Holds `bytes` of device memory until destroyed. Throws CudaError when it cannot.
class DeviceReservation {
 public:
  explicit DeviceReservation(size_t bytes);
  ~DeviceReservation();
  DeviceReservation(const DeviceReservation&) = delete;
  DeviceReservation& operator=(const DeviceReservation&) = delete;

 private:
  void* ptr_ = nullptr;
};

// Free device memory as cudaMemGetInfo reports it.
size_t deviceFreeBytes();

}  // namespace murmur::cuda
