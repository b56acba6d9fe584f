#include "sim/cpu/weight_update.hpp"

#include "sim/draws.hpp"
#include "sim/update_step.hpp"

namespace normsim::sim {

template <class R>
void CpuUpdateDevice<R>::descend(Mat<R>& W, const Mat<R>& g, double lr,
                                 std::optional<double> adam_eps) const {
  if (!adam_eps)
    subtract_sgd_step(W, g, lr);
  else
    W -= g.unaryExpr([lr, eps = *adam_eps](R x) { return adam_step(x, lr, eps); });
}

template <class R>
void CpuUpdateDevice<R>::add_random(Mat<R>& W, std::uint32_t k, Stream stream, double scale) const {
  Mat<R> G(W.rows(), W.cols());
  fill_gaussian(G.data(), std::size_t(G.size()), DrawKey{seed_, sample_, k, stream}, 1.0);
  const double g_sq = G.template cast<double>().squaredNorm();
  if (g_sq > 0) W += G * R(random_update_scale(W.template cast<double>().squaredNorm(), g_sq, scale));
}

template <class R>
void subtract_sgd_step(Mat<R>& W, const Mat<R>& g, double lr) {
  W -= g.unaryExpr([lr](R x) { return sgd_step(x, lr); });
}

template void subtract_sgd_step<float>(Mat<float>&, const Mat<float>&, double);
template void subtract_sgd_step<double>(Mat<double>&, const Mat<double>&, double);
template class CpuUpdateDevice<float>;
template class CpuUpdateDevice<double>;
template class WeightUpdate<float>;
template class WeightUpdate<double>;

}  // namespace normsim::sim
