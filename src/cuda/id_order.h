// The state in id order on the device: the gather and scatter behind DeviceAccess::gatherById and
// scatterById (core/engine.h), the check of an id-ordered state before it replaces the engine's,
// and the copy of a strided float array (a CuPy or PyTorch array) into float4 components. The
// Python module's zero-copy arrays are these buffers (docs/python.md).
#pragma once

#include "cuda/module_guard.h"

#include <cstdint>

#include "core/bodies.h"
#include "core/hd.h"
#include "cuda/launch.h"

namespace murmur::cuda {

// out.x[in.id[k]] = in.x[k] for every attribute of core/bodies.h whose output is not null. No
// host sync.
void launchGatherById(const core::ConstBodyPointers& in, uint32_t n, const core::BodyPointers& out,
                      const LaunchConfig& lc);

// out.x[k] = in.x[id[k]] for every attribute whose input is not null (the others keep their
// values). No host sync.
void launchScatterById(const core::ConstBodyPointers& in, const uint32_t* d_id, uint32_t n,
                       const core::BodyPointers& out, const LaunchConfig& lc);

// What checkIdState found: values that are not finite (x, y, z of either array, and the mass),
// negative masses, bodies off the plane z = 0 (position z or velocity z not 0: a 2D world refuses
// them), and the common mass (core::commonMass: every mass equal and > 0, else 0).
struct IdStateCheck {
  uint32_t nonFinite = 0;
  uint32_t negativeMass = 0;
  uint32_t offPlane = 0;
  float commonMass = 0;
};

// Checks n id-ordered bodies (null: that array is not checked; the common mass needs positions).
// Synchronises the stream to read the counts back (a few bytes).
IdStateCheck checkIdState(const core::Vec4* d_pos, const core::Vec4* d_vel, uint32_t n, const LaunchConfig& lc);

// dst[i] components [first, first + cols) = src[i * rowStride + c * colStride] for c < cols:
// a strided float array of n rows (strides in elements) into float4 components. No host sync.
void launchPackColumns(const float* d_src, int64_t rowStride, int64_t colStride, int cols, uint32_t n,
                       core::Vec4* d_dst, int first, const LaunchConfig& lc);

}  // namespace murmur::cuda
