// The CPU's device of a training step's update sizes (sim/update_probe.hpp: their definitions, the
// bookkeeping of which matrix is measured when): one sample, its matrices on the host. The hooks hand it
// W_0 before the optimizer moves W in place (before), and the probe then W_s (sim/cpu/update_hooks.hpp).
#pragma once
#include <cstddef>

#include "sim/cpu_matrix.hpp"
#include "sim/update_probe.hpp"

namespace normsim::sim {

template <class R>
class CpuUpdateSizes {
 public:
  using Buffer = Mat<R>;
  using Sums = UpdateSums;  // on the host as they are made

  // Keeps W_0 of the matrix the optimizer is about to move (in storage reused while the size stays).
  void before(const Mat<R>& w0) { before_ = w0; }
  const Mat<R>& held() const { return before_; }

  std::size_t entries(const Mat<R>& m) const { return std::size_t(m.size()); }
  Mat<R> buffer(std::size_t n) const { return Mat<R>(Eigen::Index(n), 1); }
  void difference(Mat<R>& dw, const Mat<R>& w0, const Mat<R>& ws, int, int, Sums& s) const {
    dw = ws - w0;  // resized in place: a spare of as many entries keeps its storage
    s.dw_sq = dw.template cast<double>().squaredNorm();
    s.w0_sq = w0.template cast<double>().squaredNorm();
  }
  void product(const Mat<R>& x, const Mat<R>& dw, int, int, Sums& s) const {
    const Mat<R> xdw = x * dw;
    s.abs_xdw = xdw.template cast<double>().cwiseAbs().sum();
    s.count = double(xdw.size());
  }
  void read(Sums&) const {}
  UpdateSums sums(const Sums& s, int) const { return s; }

 private:
  Mat<R> before_;
};

template <class R>
using CpuUpdateProbe = UpdateProbe<CpuUpdateSizes<R>>;

}  // namespace normsim::sim
