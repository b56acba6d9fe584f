#include "gpu/gpu_optimizer.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "gpu/blas.hpp"
#include "gpu/kernels.hpp"
#include "sim/edges.hpp"

namespace normsim::gpu {

namespace {
sim::ParamRule rule_of(const sim::StackShape& s, const std::tuple<int, int, int>& key) {
  const auto [k, w, part] = key;
  return k < 0 ? sim::edge_param_rule(s, sim::Edge(w))
               : sim::param_rule(s, k, sim::WeightKind(w), sim::Part(part));
}

// The parameter's name in an error message (as the CPU optimizer's).
std::string describe(const std::tuple<int, int, int>& key) {
  const auto [k, w, part] = key;
  if (k < 0) return "the " + std::string(sim::edge_name(sim::Edge(w))) + " matrix";
  return std::string(sim::weight_name(sim::WeightKind(w))) +
         (sim::Part(part) == sim::Part::bias ? "'s bias" : "") + " at sublayer " + std::to_string(k);
}
}  // namespace

template <class R>
GpuOptimizer<R>::GpuOptimizer(const sim::StackShape& shape, cublasHandle_t blas, int S)
    : shape_(shape), kind_(shape.cfg.update), blas_(blas), S_(S), T_(shape.tokens) {
  if (kind_ != vocab::Update::sgd && kind_ != vocab::Update::adam)
    throw std::logic_error("CUDA optimizer: update is neither sgd nor adam");
}

template <class R>
typename GpuOptimizer<R>::Param* GpuOptimizer<R>::recording(const Key& key, std::size_t n) {
  if (sealed_) return nullptr;
  auto [it, fresh] = params_.try_emplace(key);
  Param& p = it->second;
  if (fresh) {
    p.rule = rule_of(shape_, key);
    p.n = n;
    if (kind_ == vocab::Update::sgd) {
      p.grad = DeviceBuffer<R>(n * S_);
    } else {
      for (DeviceBuffer<R>* b : {&p.disp, &p.m, &p.v}) {
        *b = DeviceBuffer<R>(n * S_);
        b->zero();
      }
    }
  }
  if (p.recorded)
    throw std::logic_error("CUDA optimizer: a second gradient of " + describe(key) + " in step " +
                           std::to_string(t_ + 1));
  p.recorded = true;
  return &p;
}

template <class R>
void GpuOptimizer<R>::take(Param& p, const R* d_a, const R* d_b, int n_in, int n_out) {
  const bool sgd = kind_ == vocab::Update::sgd;
  if (!sgd && product_.size() < p.n * S_) product_ = DeviceBuffer<R>(p.n * S_);
  R* d_g = sgd ? p.grad.get() : product_.get();
  gemm<R>(blas_, true, false, n_in, n_out, T_, 1.0, d_a, n_in, (long long)T_ * n_in, d_b, n_out,
          (long long)T_ * n_out, 0.0, d_g, n_out, (long long)n_in * n_out, S_);
  if (sgd) return;
  const sim::Config& c = shape_.cfg;
  adam_accumulate(d_g, p.m.get(), p.v.get(), p.n * S_, p.rule.mult,
                  sim::AdamStep{p.rule.lr, p.rule.eps, c.adam_beta1, c.adam_beta2, 1, 1});
}

template <class R>
void GpuOptimizer<R>::record(int k, sim::WeightKind w, const R* d_a, const R* d_b, int n_in, int n_out,
                             sim::Part part) {
  if (Param* p = recording(Key{k, int(w), int(part)}, std::size_t(n_in) * n_out))
    take(*p, d_a, d_b, n_in, n_out);
}

template <class R>
void GpuOptimizer<R>::record_edge(sim::Edge e, const R* d_a, const R* d_b, int n_in, int n_out) {
  if (Param* p = recording(Key{-1, int(e), int(sim::Part::weight)}, std::size_t(n_in) * n_out))
    take(*p, d_a, d_b, n_in, n_out);
}

template <class R>
void GpuOptimizer<R>::apply(int k, sim::WeightKind w, R* d_w, int, int, sim::Part part) const {
  apply_param(Key{k, int(w), int(part)}, d_w);
}

template <class R>
void GpuOptimizer<R>::apply_edge(sim::Edge e, R* d_w, int, int) const {
  apply_param(Key{-1, int(e), int(sim::Part::weight)}, d_w);
}

template <class R>
void GpuOptimizer<R>::apply_param(const Key& key, R* d_w) const {
  const auto it = params_.find(key);
  if (it == params_.end() || !it->second.stepped) return;
  const Param& p = it->second;
  const std::size_t n = p.n * S_;
  // W_eff = mult W moves by mult dW, and W's gradient is mult times W_eff's: lr mult^2 on W_eff's gradients.
  if (kind_ == vocab::Update::sgd)
    gradient_step(d_w, p.grad_sum.get(), n, p.rule.lr * p.rule.mult * p.rule.mult, false, 0.0);
  else
    scaled_sum(d_w, p.disp.get(), static_cast<const double*>(nullptr), static_cast<const R*>(nullptr), n, 1,
               true);
}

template <class R>
void GpuOptimizer<R>::step_param(Param& p) const {
  const std::size_t n = p.n * S_;
  if (kind_ == vocab::Update::sgd) {  // S += g, W_eff's gradient (the multiplier enters in apply)
    if (p.grad_sum.empty()) {
      p.grad_sum = DeviceBuffer<R>(n);
      copy_on_device(p.grad_sum.get(), p.grad.get(), n * sizeof(R));
    } else {
      scaled_sum(p.grad_sum.get(), p.grad.get(), static_cast<const double*>(nullptr),
                 static_cast<const R*>(nullptr), n, 1, true);
    }
    return;
  }
  const sim::Config& c = shape_.cfg;
  const sim::AdamStep a{p.rule.lr,
                        p.rule.eps,
                        c.adam_beta1,
                        c.adam_beta2,
                        1 - std::pow(c.adam_beta1, t_),
                        1 - std::pow(c.adam_beta2, t_)};
  adam_displace(p.disp.get(), p.m.get(), p.v.get(), n, p.rule.mult, a);
}

template <class R>
void GpuOptimizer<R>::step() {
  ++t_;
  for (auto& [key, p] : params_) {
    if (!p.recorded)
      throw std::logic_error("CUDA optimizer: no gradient of " + describe(key) + " in step " +
                             std::to_string(t_));
    step_param(p);
    p.recorded = false;
    p.stepped = true;
  }
  sealed_ = false;
}

template class GpuOptimizer<float>;
template class GpuOptimizer<double>;

}  // namespace normsim::gpu
