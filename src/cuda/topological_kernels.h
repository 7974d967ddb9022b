// Topological neighbours on the CUDA engine (--topological K; core/topological.h): a grid of
// core::topologicalGrid's cells built every step, each body's K nearest by the shell search of the
// CPU engine (the same cells, offsets and order (d^2, id)), then the active rule's sums over them.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>
#include <vector>

#include "core/grid.h"
#include "cuda/device_buffer.h"
#include "cuda/launch.h"

namespace murmur::cuda {

struct DeviceState;

// The step's own scratch (the sort and the cells' ranges are the state's): the grid's spec and the
// positions and ids gathered in cell order; grown as needed.
struct TopologicalBuffers {
  DeviceBuffer<uint32_t> sid;
  DeviceBuffer<core::Vec4> spos;
  DeviceBuffer<core::GridSpec> grid;
};

// The force stage of a step over topological neighbours: the new velocities into velNew (the
// state's order), timed as the label, sort, bounds, reorder and force stages.
void topologicalForces(DeviceState& s, TopologicalBuffers& b, core::Vec4* velNew);

// Every body's K nearest, indexed by id (ids 0..N-1), each list in order (d^2, id): the tests'
// view of the sets the step sums over.
std::vector<std::vector<uint32_t>> topologicalNeighbours(DeviceState& s, TopologicalBuffers& b);

}  // namespace murmur::cuda
