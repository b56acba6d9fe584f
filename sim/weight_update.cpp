#include "sim/weight_update.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "sim/draws.hpp"
#include "sim/edges.hpp"

namespace normsim::sim {

template <class R>
WeightUpdate<R>::WeightUpdate(const Config& c, std::uint64_t seed, std::uint32_t sample)
    : kind_(c.update),
      lr_(c.update_lr),
      scale_(c.update_scale),
      eps_(c.adam_eps),
      seed_(seed),
      sample_(sample) {
  if (needs_gradients()) grads_.resize(std::size_t(c.depth));
}

template <class R>
bool WeightUpdate<R>::needs_gradients() const {
  return steps_on_loss(kind_);
}

template <class R>
void WeightUpdate<R>::set_gradient(int k, WeightKind w, Mat<R> g, Part part) {
  if (needs_gradients() && !sealed_) grads_.at(std::size_t(k))[param_slot(w, part)] = std::move(g);
}

template <class R>
void WeightUpdate<R>::apply(int k, WeightKind w, Mat<R>& W, Part part) const {
  switch (kind_) {
    case vocab::Update::none:
      return;
    case vocab::Update::random: {
      Mat<R> G(W.rows(), W.cols());
      const auto stream = update_stream(w, part);
      fill_gaussian(G.data(), std::size_t(G.size()), DrawKey{seed_, sample_, std::uint32_t(k), stream}, 1.0);
      const double g_sq = G.template cast<double>().squaredNorm();
      if (g_sq > 0) W += G * R(random_update_scale(W.template cast<double>().squaredNorm(), g_sq, scale_));
      return;
    }
    case vocab::Update::sgd:
    case vocab::Update::adam:
      break;
  }
  step(grads_.at(std::size_t(k))[param_slot(w, part)], W,
       std::string(weight_name(w)) + (part == Part::bias ? "'s bias" : "") + " at sublayer " +
           std::to_string(k));
}

template <class R>
void WeightUpdate<R>::set_edge_gradient(Edge e, Mat<R> g) {
  if (needs_gradients() && !sealed_) edge_grads_[std::size_t(e)] = std::move(g);
}

template <class R>
void WeightUpdate<R>::apply_edge(Edge e, Mat<R>& W) const {
  if (needs_gradients()) step(edge_grads_[std::size_t(e)], W, "the " + std::string(edge_name(e)));
}

template <class R>
void WeightUpdate<R>::step(const Mat<R>& g, Mat<R>& W, const std::string& what) const {
  if (g.rows() != W.rows() || g.cols() != W.cols())
    throw std::logic_error("weight update: no gradient of " + what);
  if (kind_ == vocab::Update::sgd)
    subtract_sgd_step(W, g, lr_);
  else
    W -= g.unaryExpr([lr = lr_, eps = eps_](R x) { return adam_step(x, lr, eps); });
}

template <class R>
void subtract_sgd_step(Mat<R>& W, const Mat<R>& g, double lr) {
  W -= g.unaryExpr([lr](R x) { return sgd_step(x, lr); });
}

template void subtract_sgd_step<float>(Mat<float>&, const Mat<float>&, double);
template void subtract_sgd_step<double>(Mat<double>&, const Mat<double>&, double);
template class WeightUpdate<float>;
template class WeightUpdate<double>;

}  // namespace normsim::sim
