// Topological neighbours on the CUDA engine (--topological K; core/topological.h): a grid built
// every step (core::topologicalSphereGrid's rows; under the periodic boundary
// core::topologicalGrid's cells), each body's K nearest in order (d^2, id) by a search of growing
// spheres (core::searchSpheres; periodic: the CPU engine's shell search, core::searchShells), then
// the active rule's sums over them. The sets, and so the sums, equal the CPU engine's.
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>
#include <vector>

#include "core/grid.h"
#include "cuda/device_buffer.h"
#include "cuda/launch.h"

namespace murmur::cuda {

struct DeviceState;

// The step's own scratch (the sort and the cells' ranges are the state's): the grid's spec, the
// positions, velocities and ids gathered in cell order and each id's slot; grown as needed.
struct TopologicalBuffers {
  DeviceBuffer<uint32_t> sid, inv;
  DeviceBuffer<core::Vec4> spos, svel;
  DeviceBuffer<core::GridSpec> grid;
  DeviceBuffer<float> hint;  // by id: the K-th distance of the previous step (the first radius)
};

// A step over topological neighbours: the new velocities and the positions integrated as
// DeviceState::integrateBoids does (in the force kernel), timed as the label, sort, bounds,
// reorder and force stages. Outside the periodic boundary the state is sorted by cell first (the
// rows pipeline's sort), so the bodies' order changes, as on the rows pipeline.
void topologicalStep(DeviceState& s, TopologicalBuffers& b);

// Every body's K nearest, indexed by id (ids 0..N-1), each list in order (d^2, id): the tests'
// view of the sets the step sums over.
std::vector<std::vector<uint32_t>> topologicalNeighbours(DeviceState& s, TopologicalBuffers& b);

}  // namespace murmur::cuda
