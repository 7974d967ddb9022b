// The tree pipeline's stages on the GPU (core/tree.h has the method and the shared per-node
// functions): treeBounds -> treeKeys (label) -> treeSort -> reorderBodies (grid_build.h) ->
// buildRadixTree -> treeMoments (bounds) -> treeWalk (force).
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <cstdint>

#include "core/hd.h"
#include "core/tree.h"
#include "cuda/device_buffer.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// Every buffer the tree needs for n bodies, allocated once (reserve), never per step.
struct TreeBuffers {
  uint32_t capacity = 0;
  DeviceBuffer<uint64_t> keys[2];       // Morton keys, radix sort double buffer
  DeviceBuffer<uint32_t> index[2];      // body index sorted along with the keys
  DeviceBuffer<unsigned char> sortTemp;  // CUB scratch
  DeviceBuffer<core::TreeLinks> links;  // [n - 1] internal nodes
  DeviceBuffer<core::Vec4> com, quad0, quad1, boxMin, boxMax;  // [n - 1], see core::TreeMoments
  DeviceBuffer<uint32_t> parent;        // [2n - 1]: internal nodes' parents, then bodies' parents
  DeviceBuffer<uint32_t> visits;        // [n - 1] bottom-up arrival counters
  DeviceBuffer<unsigned int> bounds;    // 6 order-preserving encoded floats: min xyz, max xyz
  DeviceBuffer<uint32_t> groupFlag;     // [n] 1 where a walk group starts (core::markGroupStarts)
  DeviceBuffer<uint32_t> groupStart;    // [n] first body of each group, in order
  DeviceBuffer<uint32_t> counters;      // [0] number of groups, [1] next group to walk, [2] a share's end
  DeviceBuffer<unsigned char> selectTemp;  // CUB scratch of the group compaction

  // Allocates for n bodies (frees and regrows only when n exceeds the capacity).
  void reserve(uint32_t n);
  void release();
  // Device bytes reserve(n) allocates. Without a device the sort scratch is estimated.
  static size_t bytesFor(size_t n);
};

// treeBounds: the bodies' bounding box into buffers.bounds.
void launchTreeBounds(const core::Vec4* d_pos, uint32_t n, TreeBuffers& buffers, const LaunchConfig& lc);
// treeKeys (label): Morton key and index of every body (current order). With d_order, body i of
// the current order is d_pos[d_order[i]] (the tree over ranks: the gathered positions in id order).
void launchTreeKeys(const core::Vec4* d_pos, uint32_t n, TreeBuffers& buffers, const LaunchConfig& lc,
                    const uint32_t* d_order = nullptr);
// treeSort: stable radix sort of (key, index) by the 63 key bits. Returns which of keys[] /
// index[] holds the sorted result.
int treeSort(uint32_t n, TreeBuffers& buffers, const LaunchConfig& lc);
// buildRadixTree (with the walk groups) + treeMoments on positions already gathered into key
// order. sortedKeys are the sort's output (keys[sel]).
void launchBuildTree(const core::Vec4* d_sortedPos, const uint64_t* d_sortedKeys, uint32_t n, float theta,
                     TreeBuffers& buffers, const LaunchConfig& lc);
// treeWalk (force): d_acc[i] = G * acceleration of sorted body i through the group walk of
// core::treeAccelerations (a warp takes the next group until none is left).
void launchTreeWalk(const core::Vec4* d_sortedPos, uint32_t n, const TreeBuffers& buffers, float eps2, float G,
                    int leafSize, core::Vec4* d_acc, const LaunchConfig& lc);

// The tree over k ranks: share `me` of the walk groups (core::treeShareStart). Writes the first
// body of every share, k + 1 offsets into the sorted order (n last), to d_bodyCut, and sets the
// walk's counters to this share's groups for launchTreeWalkShare.
void launchTreeShare(uint32_t n, int me, int k, TreeBuffers& buffers, uint32_t* d_bodyCut, const LaunchConfig& lc);
// treeWalk over the share launchTreeShare set (shareBodies of them): d_acc of those bodies only,
// each the value the whole walk gives it.
void launchTreeWalkShare(const core::Vec4* d_sortedPos, uint32_t n, uint32_t shareBodies, const TreeBuffers& buffers,
                         float eps2, float G, int leafSize, core::Vec4* d_acc, const LaunchConfig& lc);

}  // namespace murmur::cuda
