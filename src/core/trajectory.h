// Trajectories (docs/observables.md#trajectories): a run's frames in one HDF5 file, streamed, with
// an XDMF 3 file beside it that ParaView and VisIt open as a time series.
//
// The HDF5 layout (every array in id order, as --out writes bodies):
//
//   /                       attributes: murmuration_trajectory (1), force, half_size, bodies,
//                           params (the JSON that --params reads)
//   /ids                    uint32 (n)           the bodies' ids (0..n-1)
//   /masses                 float32 (n)
//   /connectivity           uint32 (n, 1)        0..n-1: the XDMF Polyvertex topology
//   /step, /time            uint64, float64 (frames): one entry per complete frame
//   /frames/000000/         one group per frame, attributes step and time
//       positions           float32 (n, 3), chunked
//       velocities          float32 (n, 3), chunked
//       species             uint8 (n): 0 to 255, all 0 for bodies without one; per frame, with
//                           the state it belongs to (the XDMF names it: ParaView colours by it)
//   /observables            float64 (samples, columns), attribute columns ("step,time,...")
//
// A frame is complete once /step holds it: its group is written and flushed first, then /step and
// /time grow by one and the file is flushed again, then the XDMF (which names only complete frames)
// is replaced atomically. After a failed write the writer abandons the file as the last flush left
// it. A run stopped by a signal, a full disk or a crash leaves every completed frame
// readable. Memory does not grow with the frame count: each frame is written and released.
//
// Built without HDF5 (libhdf5-dev absent at configure time), available() is false and every entry
// point throws UsageError saying so.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/bodies.h"
#include "core/body_io.h"

namespace murmur::core {

namespace trajectory {

// True when this build writes and reads trajectories.
bool available();

// True for a state spec that names an HDF5 trajectory: PATH.h5 (or .hdf5), optionally with
// @last or @K (the frame index, from 0).
bool isTrajectorySpec(const std::string& spec);

// run.h5 -> run.xdmf (beside it).
std::string xdmfPathFor(const std::string& h5Path);

// Throws UsageError (exit 2) unless `path` ends in .h5 or .hdf5 and its name can be named in an
// XDMF file; `option` is how the user named it ("--trajectory").
void checkTrajectoryPath(const std::string& option, const std::string& path);

struct Meta {
  std::string force;       // "boids" or "gravity"
  float halfSize = 0;
  std::string paramsJson;  // the run's parameters
};

class Writer {
 public:
  // Creates (replaces) the file and writes its attributes. Throws UsageError naming option and
  // path when it cannot be created.
  Writer(const std::string& option, const std::string& path, const Meta& meta);
  ~Writer();
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  // Appends a frame of `b` (id order: b.id[i] == i; species empty or one per body); ids and
  // masses are written with the first.
  // Flushes the file and replaces the XDMF. Throws WriteError when a write fails.
  void frame(const Bodies& b, uint64_t step, double time);
  // Appends one row of observables; `columns` (the first call's) become the dataset's attribute.
  void observables(const std::vector<std::string>& columns, const std::vector<double>& row);
  uint64_t frames() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The header of a saved frame (force, half size, params, its step, bodies) and the frame itself,
// species included (left empty, species 0, for a file written before frames held species).
// `spec` is PATH[@last|@K]; without @, the last frame. Throws UsageError naming the file.
StateHeader readHeader(const std::string& spec);
Bodies readFrame(const std::string& spec, StateHeader* header = nullptr);

}  // namespace trajectory

}  // namespace murmur::core
