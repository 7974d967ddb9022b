// Stages of the `rows` boids pipeline (core/row_search.h): one offset per cell, so that a row of
// cells is one [first, last) range, either from the radix sort's keys (findCellFirst, after the
// shared stages of grid_build.h) or from the counting sort below; the force kernel walks the
// pruned rows and integrates; the statistics kernel counts what it examines.
#pragma once

#include <cstdint>

#include "core/bodies.h"
#include "core/grid.h"
#include "core/params.h"
#include "core/random.h"
#include "core/row_search.h"
#include "cuda/launch.h"
#include "cuda/module_guard.h"
#include "cuda/observables.h"

namespace murmur::cuda {

// findCellFirst. Input d_sortedKeys[0, n), n > 0. Output d_cellFirst[0, numCells]: the first
// sorted slot whose key is >= c (n for c past the last key), so cell c holds
// [d_cellFirst[c], d_cellFirst[c + 1]) and empty cells need no marker.
void launchFindCellFirst(const uint32_t* d_sortedKeys, uint32_t n, uint32_t numCells, uint32_t* d_cellFirst,
                         const LaunchConfig& lc);
// The same for the cells [fromCell, toCell] only (they must hold every key of [0, n)); the other
// entries are left as they were. A rank's slab and the planes its search reaches are a small part
// of the whole grid.
void launchFindCellFirstIn(const uint32_t* d_sortedKeys, uint32_t n, uint32_t fromCell, uint32_t toCell,
                           uint32_t* d_cellFirst, const LaunchConfig& lc);

// The counting sort by cell of the rows grids, an alternative to labelCells -> sortByCell ->
// findCellFirst that gives the same permutation (a stable sort by cell of the current order) and
// the same offsets. Where cells hold a body or two, it costs less than a radix sort over the
// key bits: one atomic per body, one scan over the cells, two scatters.
//   launchCountCells: with d_counts[0, numCells] zero on entry, d_keys[q] = cell of body q,
//     d_rank[q] = its rank among its cell's bodies (in the order the atomics land),
//     d_counts[c] = bodies in cell c; *d_crowded = 1 when a cell holds more than
//     kStableCellMax bodies (the caller resets it). The rows force kernel can do the same for
//     the positions it integrates (RowsStepOut).
//   launchScanCellCounts: d_cellFirst = exclusive sum of d_counts[0, numCells] (launchFindCellFirst's
//     output). d_temp holds at least cellScanTempBytes(numCells) bytes.
//   launchPlaceByCell: d_placed[0, n) = body per sorted slot, in the atomics' order inside a cell.
//   launchReorderPlaced: the bodies (every attribute) gathered into cell order (out[slot] = in[body]), stable inside
//     every cell of at most kStableCellMax bodies (a body's slot in its cell is the number of the
//     cell's bodies with a lower current index; larger cells keep the atomics' order); with
//     d_plane, also the bodies' plane records in that order (RowsStepOut::plane; with planeHeadings
//     their unit velocities, storePlaneRecord).
// countingSortFits: whether the scan can count numCells + 1 items (an int).
constexpr uint32_t kStableCellMax = 256;
bool countingSortFits(uint32_t numCells);
size_t cellScanTempBytes(uint32_t numCells);
void launchCountCells(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid, uint32_t* d_keys,
                      uint32_t* d_rank, uint32_t* d_counts, uint32_t* d_crowded, const LaunchConfig& lc);
void launchScanCellCounts(const uint32_t* d_counts, uint32_t numCells, uint32_t* d_cellFirst, void* d_temp,
                          size_t tempBytes, const LaunchConfig& lc);
void launchPlaceByCell(const uint32_t* d_keys, const uint32_t* d_rank, uint32_t n, const uint32_t* d_cellFirst,
                       uint32_t* d_placed, const LaunchConfig& lc);
void launchReorderPlaced(const uint32_t* d_keys, const uint32_t* d_placed, uint32_t n, const uint32_t* d_cellFirst,
                         const core::ConstBodyPointers& in, const core::BodyPointers& out, const LaunchConfig& lc,
                         core::Vec4* d_plane = nullptr, bool planeHeadings = false);

// What the rows force kernel does after a boid's new velocity: it integrates (core::boidIntegrate
// into posOut, in the same order, so that no integrate kernel reads the state again) and, with
// counts, counts the new position's cell for the next step's counting sort (as launchCountCells).
struct RowsStepOut {
  core::Vec4* posOut = nullptr;
  float dt = 0, halfSize = 0;
  core::DrawKeys draws{};  // the rule's draws (core/random.h): ids in the order of the bodies
  uint32_t* keys = nullptr;
  uint32_t* rank = nullptr;
  uint32_t* counts = nullptr;
  uint32_t* crowded = nullptr;
  // A sampled step (CudaPipeline::sampleStep) when sample.sums is set: the scalar observables of
  // the state the kernel reads (the state the step starts from) added into `sample`, from the
  // candidates the force visits anyway, and the boids whose nearest other boid lies beyond their
  // search listed for launchRowsNearestBeyond. The velocities and positions it writes do not change.
  BoidSampleSums sample;
  // The plane (dims 2): the bodies' records (x, y, vx, vy) in the same order as the positions
  // (storePlaneRecord, written by the sort's reorder; (x, y, ux, uy), the unit velocity, for a
  // rule with kHeadingRecords), from which the kernels read their candidates, one load each; null
  // elsewhere. A sampled step reads the positions.
  const core::Vec4* plane = nullptr;
  // The periodic boundary, split (imagedSplit, periodicRowsSplit): room for n boids, where the
  // kernel over every boid lists those whose search crosses a face (their index, and in
  // imagedSums their sums so far, n entries of rowsImagedSumBytes each) for the kernel that
  // searches around their images, and their count. Unused otherwise.
  bool imagedSplit = false;
  uint32_t* imaged = nullptr;
  void* imagedSums = nullptr;
  uint32_t* imagedCount = nullptr;
};

// Whether the periodic boundary's step splits (RowsStepOut::imagedSplit): the kernel over every
// boid leaves the boids near a face to a second kernel that walks their images' rows, because
// walking them in the same kernel would cost it occupancy (fewer resident blocks of `block`
// threads for p's rule and `loop`). Queries the current device.
bool periodicRowsSplit(const core::SimParams& p, core::RowLoop loop, int flatTableRows, int block);
// What the rows pipeline allocates beyond the grid for n bodies under p (cuda/pipelines/rows.cpp):
// the plane records in 2D, and the periodic split's lists where the step splits. Queries the
// current device (periodicRowsSplit). The memory plan counts it (memory_plan.h).
size_t rowsPipelineBytes(const core::SimParams& p, size_t n);
// The bytes of one boid's partial sums in RowsStepOut::imagedSums for p's local rule.
size_t rowsImagedSumBytes(const core::SimParams& p);

// Rows per thread in the table of the flat loop (core::RowLoop::Flat, rows_kernels.cu): the
// most a search of searchRadius on g can visit, capped at kRowsFlatMaxTableRows (a row past the
// table is walked at once, still exactly).
constexpr int kRowsFlatMaxTableRows = 40;
int rowsFlatTableRows(const core::GridSpec& g, float searchRadius);

// accumulateForces, rows. Input d_pos, d_vel in cell order of d_grid, d_cellFirst. Output
// d_velOut[i] = the new velocity of body i (w = 0), in the same order. `loop`: the loop for the
// rows grid's occupancy (core::rowLoop); the flat loop lists flatTableRows rows per thread in
// shared memory (rowsFlatTableRows). Every loop finds the same neighbours. `out`: the
// integration and the next step's counts, done in the same kernel (RowsStepOut). Under the
// periodic boundary the kernel also walks the rows around the images of the boids near a face,
// or, split (out.imagedSplit), a second kernel does.
void launchBoidsRows(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const core::GridSpec* d_grid,
                     const uint32_t* d_cellFirst, const core::SimParams& p, float searchRadius, core::RowLoop loop,
                     int flatTableRows, core::Vec4* d_velOut, const RowsStepOut& out, const LaunchConfig& lc);

// After a sampled launchBoidsRows on the same arguments: the nearest other boid of every boid
// listed in sample.beyond (none of its candidates lay inside searchRadius), by rows searches of
// growing radius, each exact for its radius, until one finds a boid closer than its radius or
// covers the whole grid; their distances added into sample.sums[kNearest] and kept by id (d_id:
// the ids in the same order) in sample.hint for the next sample's searches. Then the sample ends:
// the totals land in sample.host, and the sums and counts are zero again for the next sample.
void launchRowsNearestBeyond(const core::Vec4* d_pos, const uint32_t* d_id, uint32_t n, const core::GridSpec* d_grid,
                             const uint32_t* d_cellFirst, float searchRadius, const BoidSampleSums& sample,
                             const LaunchConfig& lc);

// Neighbour statistics over the rows the force kernel visits, reading the (unreordered) bodies
// through d_sortedIndex. Adds candidates (j != i) to d_counts[0], neighbours (d^2 < radius2) to
// d_counts[1].
void launchBoidsStatsRows(const core::Vec4* d_pos, uint32_t n, const core::GridSpec* d_grid,
                          const uint32_t* d_cellFirst, const uint32_t* d_sortedIndex, float searchRadius, float radius2,
                          unsigned long long* d_counts, const LaunchConfig& lc);

}  // namespace murmur::cuda
