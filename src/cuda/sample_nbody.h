// The comparison baseline of `murmur bench --reference`: all-pairs gravity written the way
// NVIDIA's cuda-samples nbody (GPU Gems 3, ch. 31) writes it, so that the engine's naive kernel is
// timed against the published formulation in the same run. Not a pipeline: no engine uses it.
#pragma once

#include "cuda/module_guard.h"

#include <memory>
#include <vector>

#include "core/hd.h"

namespace murmur::cuda {

class SampleNbody {
 public:
  // Uploads the positions (w = mass) once; `block` threads per block (a multiple of 32, 32..1024).
  SampleNbody(const std::vector<core::Vec4>& pos, float eps2, float G, int block);
  ~SampleNbody();
  SampleNbody(const SampleNbody&) = delete;
  SampleNbody& operator=(const SampleNbody&) = delete;

  // One launch of the force kernel, then a synchronize (the engine's bench steps end the same way).
  void computeForces();
  // The accelerations of the last computeForces (xyz, G applied), in input order.
  std::vector<core::Vec4> accelerations() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace murmur::cuda
