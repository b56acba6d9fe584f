// Device memory owned by RAII buffers, with one process-wide count of the bytes they hold so the backend
// can report its peak (Backend::peak_memory_bytes; cuBLAS's own workspace is not counted).
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

namespace normsim::gpu {
inline namespace NORMSIM_GPU_ABI {

void* device_allocate(std::size_t bytes);  // throws (with the size) when the device is out of memory
void device_free(void* p, std::size_t bytes) noexcept;
std::size_t device_bytes_in_use();
std::size_t device_bytes_peak();
void reset_device_peak();  // peak := bytes in use now
// Lets the stream-ordered pool keep freed memory for reuse instead of returning it to the driver.
void keep_pool_memory();
// Device bytes this process can allocate now: free memory plus what the pool holds unused (it hands that
// out again before asking the driver). Stable across calls, unlike cudaMemGetInfo's free figure alone.
std::size_t plannable_device_bytes();
void copy_to_host(void* dst, const void* d_src, std::size_t bytes);
void copy_to_device(void* d_dst, const void* src, std::size_t bytes);
void device_zero(void* d_dst, std::size_t bytes);
// Device to device, asynchronous on the default stream (no host synchronization).
void copy_on_device(void* d_dst, const void* d_src, std::size_t bytes);

// n elements of T on the device (uninitialized), or empty.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) d_ = static_cast<T*>(device_allocate(n * sizeof(T)));
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : d_(std::exchange(o.d_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      d_ = std::exchange(o.d_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void reset() {
    if (d_) device_free(d_, n_ * sizeof(T));
    d_ = nullptr;
    n_ = 0;
  }
  T* get() const { return d_; }
  std::size_t size() const { return n_; }
  bool empty() const { return d_ == nullptr; }
  std::vector<T> to_host() const {
    std::vector<T> h(n_);
    if (n_) copy_to_host(h.data(), d_, n_ * sizeof(T));
    return h;
  }
  static DeviceBuffer from_host(const std::vector<T>& h) {
    DeviceBuffer b(h.size());
    if (!h.empty()) copy_to_device(b.d_, h.data(), h.size() * sizeof(T));
    return b;
  }
  void zero() {
    if (n_) device_zero(d_, n_ * sizeof(T));
  }

 private:
  T* d_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace NORMSIM_GPU_ABI
}  // namespace normsim::gpu
