// One comparison of a GPU op's launcher with its reference (gpu/ops.hpp, gpu/stat_ops.hpp), as a row of
// tests/gpu/test_gpu_ops.cpp writes it: check_op(tol, eps, NORMSIM_OP(foo), args...) runs gpu::foo on device
// copies of the buffer arguments and gpu::cpu::foo on the host ones, from the same contents, then compares
// every output buffer with the mixed tolerance |gpu - cpu| <= tol + |cpu| * eps (test_util_gpu.hpp).
#pragma once
#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

#include "gpu/device_buffer.hpp"
#include "test_util_gpu.hpp"

namespace normsim::test {

// A pointer argument: its contents (the same on both sides before the call), and whether the op writes it
// (then it is compared) or it is passed as a null pointer of its type.
enum class Role { in, out, null };
template <class T>
struct Buf {
  std::vector<T> host;
  Role role;
};
template <class T>
Buf<T> in(std::vector<T> v) {
  return {std::move(v), Role::in};
}
// Written by the op, from these contents (what an accumulating op adds to), or from zeros.
template <class T>
Buf<T> out(std::vector<T> v) {
  return {std::move(v), Role::out};
}
template <class T>
Buf<T> out(std::size_t n) {
  return {std::vector<T>(n), Role::out};
}
// v where `use`, else a null pointer of its type (an optional operand).
template <class T>
Buf<T> in_or_null(bool use, std::vector<T> v) {
  return {std::move(v), use ? Role::in : Role::null};
}

namespace op_check {
template <class T>
gpu::DeviceBuffer<T> device(const Buf<T>& b) {
  return b.role == Role::null ? gpu::DeviceBuffer<T>() : gpu::DeviceBuffer<T>::from_host(b.host);
}
template <class S>
S device(const S& scalar) {
  return scalar;
}
template <class T>
T* pointer(gpu::DeviceBuffer<T>& d) {
  return d.get();  // null for an empty (null) buffer
}
template <class T>
T* pointer(Buf<T>& b) {
  return b.role == Role::null ? nullptr : b.host.data();
}
template <class S>
S pointer(const S& scalar) {
  return scalar;
}
template <class T>
void compare(const gpu::DeviceBuffer<T>& d, const Buf<T>& h, double tol, double eps) {
  if (h.role == Role::out) require_close(d.to_host(), h.host, tol, eps);
}
template <class D, class S>
void compare(const D&, const S&, double, double) {}
}  // namespace op_check

template <class Gpu, class Cpu, class... A>
void check_op(double tol, double eps, Gpu launcher, Cpu reference, A... args) {
  auto on_device = std::make_tuple(op_check::device(args)...);
  std::apply([&](auto&... d) { launcher(op_check::pointer(d)...); }, on_device);
  reference(op_check::pointer(args)...);
  std::apply([&](const auto&... d) { (op_check::compare(d, args, tol, eps), ...); }, on_device);
}

}  // namespace normsim::test

// The launcher gpu::foo and the reference gpu::cpu::foo, for check_op.
#define NORMSIM_OP(name) \
  [](auto... a) { ::normsim::gpu::name(a...); }, [](auto... a) { ::normsim::gpu::cpu::name(a...); }
