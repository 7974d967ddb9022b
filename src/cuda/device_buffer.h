// An owning, move-only device allocation. The engine allocates its buffers at reset (and grid
// buffers when the cell count grows), never per step; release() is the only free.
#pragma once

#include "cuda/module_guard.h"

#include <cstddef>
#include <utility>

#include "cuda/cuda_check.h"

namespace murmur::cuda {

template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() { release(); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), count_(std::exchange(o.count_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      release();
      ptr_ = std::exchange(o.ptr_, nullptr);
      count_ = std::exchange(o.count_, 0);
    }
    return *this;
  }

  // Frees the old allocation first so that a larger one can reuse its memory.
  void allocate(size_t count) {
    release();
    if (count == 0) return;
    void* p = nullptr;
    MURMUR_CUDA_CHECK(cudaMalloc(&p, count * sizeof(T)));
    ptr_ = static_cast<T*>(p);
    count_ = count;
  }

  // Errors are ignored: this also runs from destructors, possibly after the context is gone.
  void release() noexcept {
    if (ptr_) cudaFree(ptr_);
    ptr_ = nullptr;
    count_ = 0;
  }

  T* get() const { return ptr_; }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  size_t count_ = 0;
};

}  // namespace murmur::cuda
