#include "cuda/stage_timer.h"

#include "cuda/cuda_check.h"

namespace murmur::cuda {

StageTimer::~StageTimer() {
  for (cudaEvent_t e : pool_) cudaEventDestroy(e);  // errors ignored: may run after context teardown
}

void StageTimer::beginStep(bool enabled, cudaStream_t stream) {
  enabled_ = enabled;
  stream_ = stream;
  discard();
}

int StageTimer::nextEvent() {
  if (used_ == static_cast<int>(pool_.size())) {
    cudaEvent_t e = nullptr;
    MURMUR_CUDA_CHECK(cudaEventCreate(&e));
    pool_.push_back(e);
  }
  return used_++;
}

void StageTimer::record(int event) { MURMUR_CUDA_CHECK(cudaEventRecord(pool_[event], stream_)); }

core::StepProfile StageTimer::endStep() {
  core::StepProfile p;
  if (!enabled_) return p;
  enabled_ = false;
  if (records_.empty()) return p;
  MURMUR_CUDA_CHECK(cudaEventSynchronize(pool_[records_.back().stop]));
  for (const Record& r : records_) {
    float ms = 0;
    MURMUR_CUDA_CHECK(cudaEventElapsedTime(&ms, pool_[r.start], pool_[r.stop]));
    p.at(r.stage) += ms;
  }
  records_.clear();
  return p;
}

}  // namespace murmur::cuda
