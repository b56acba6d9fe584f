#include "theory/routing.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

namespace normsim::theory {

namespace {

constexpr int kDraws = 1 << 15;
constexpr std::uint64_t kSeed = 20261127;

// 2 E kDraws standard normals (x then y for each draw), built once per E.
const std::vector<double>& normals(int E) {
  static std::mutex lock;
  static std::map<int, std::vector<double>> cache;
  const std::lock_guard<std::mutex> hold(lock);
  auto [it, fresh] = cache.try_emplace(E);
  if (fresh) {
    std::mt19937_64 gen(kSeed);
    std::vector<double>& v = it->second;
    v.resize(std::size_t(2) * E * kDraws);
    const double two_pi = 6.283185307179586;
    for (std::size_t i = 0; i + 1 < v.size(); i += 2) {
      const double u1 = (double(gen() >> 11) + 1.0) * 0x1.0p-53, u2 = double(gen() >> 11) * 0x1.0p-53;
      const double r = std::sqrt(-2.0 * std::log(u1));
      v[i] = r * std::cos(two_pi * u2), v[i + 1] = r * std::sin(two_pi * u2);
    }
  }
  return it->second;
}

// The gates of logits z (size E) into g: top k by z (ties to the lower index), softmax over all or over
// the selected; and into a the softmax whose Jacobian the gates take (routing.hpp): g itself renormalized,
// p over all E experts otherwise.
void gates(const RoutedMlp& r, const std::vector<double>& z, std::vector<int>& order, std::vector<double>& g,
           std::vector<double>& a) {
  const int E = r.experts;
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + r.top_k, order.end(),
                    [&](int x, int y) { return z[x] > z[y] || (z[x] == z[y] && x < y); });
  const double mx = z[std::size_t(order[0])];
  double all = 0, selected = 0;
  for (int e = 0; e < E; ++e) all += std::exp(z[std::size_t(e)] - mx);
  for (int j = 0; j < r.top_k; ++j) selected += std::exp(z[std::size_t(order[j])] - mx);
  std::fill(g.begin(), g.end(), 0.0);
  for (int j = 0; j < r.top_k; ++j) {
    const auto e = std::size_t(order[j]);
    g[e] = std::exp(z[e] - mx) / (r.renormalized ? selected : all);
  }
  for (int e = 0; e < E; ++e)
    a[std::size_t(e)] = r.renormalized ? g[std::size_t(e)] : std::exp(z[std::size_t(e)] - mx) / all;
}

// sum_{e,j} J_ej(a) J_ej(b) for the gates and softmaxes of two tokens (routing.hpp).
double jacobian_product(const std::vector<double>& ga, const std::vector<double>& aa,
                        const std::vector<double>& gb, const std::vector<double>& ab) {
  double cross = 0, sum = 0;
  for (std::size_t j = 0; j < aa.size(); ++j) cross += aa[j] * ab[j];
  for (std::size_t e = 0; e < ga.size(); ++e) sum += ga[e] * gb[e] * (1.0 - aa[e] - ab[e] + cross);
  return sum;
}

// The mean of a sampled quantity and its standard error.
struct Mean {
  double sum = 0, sum_sq = 0;
  void add(double x) { sum += x, sum_sq += x * x; }
  double mean() const { return sum / kDraws; }
  double se() const { return std::sqrt(std::max(0.0, sum_sq / kDraws - mean() * mean()) / kDraws); }
};

// Every logit equal: the lowest k experts, gates 1/k (renormalized) or 1/E (softmax), one gate Jacobian.
RoutingMoments tied_moments(const RoutedMlp& r) {
  const double k = r.top_k, E = r.experts;
  RoutingMoments m;
  const double g = r.renormalized ? 1.0 / k : 1.0 / E;
  m.diag = m.off = k * g * g;
  m.router_diag = m.router_off = r.renormalized ? (1.0 - 1.0 / k) / k : k * (1.0 - 1.0 / E) / (E * E);
  return m;
}

}  // namespace

RoutingMoments gate_moments(const RoutedMlp& r, double s_sq, double rho) {
  const int E = r.experts, k = r.top_k;
  if (E < 1 || k < 1 || k > E) throw std::invalid_argument("routed MLP: need 1 <= moe_top_k <= moe_experts");
  if (!(s_sq >= 0.0) || !std::isfinite(s_sq)) return {NAN, NAN, 0.0, 0.0, NAN, NAN, 0.0, 0.0};
  if (s_sq == 0.0) return tied_moments(r);
  const double s = std::sqrt(s_sq), c = std::clamp(rho, -1.0, 1.0), c2 = std::sqrt(1.0 - c * c);
  const std::vector<double>& v = normals(E);
  const auto n_e = static_cast<std::size_t>(E);
  std::vector<double> za(n_e), zb(n_e), ga(n_e), gb(n_e), aa(n_e), ab(n_e);
  std::vector<int> order(n_e);
  Mean diag, off, router_diag, router_off;
  for (int n = 0; n < kDraws; ++n) {
    const double* x = v.data() + std::size_t(2) * E * n;
    const double* y = x + E;
    for (int e = 0; e < E; ++e)
      za[std::size_t(e)] = s * x[e], zb[std::size_t(e)] = s * (c * x[e] + c2 * y[e]);
    gates(r, za, order, ga, aa);
    gates(r, zb, order, gb, ab);
    double d = 0, o = 0;
    for (int e = 0; e < E; ++e)
      d += ga[std::size_t(e)] * ga[std::size_t(e)], o += ga[std::size_t(e)] * gb[std::size_t(e)];
    diag.add(d), off.add(o);
    router_diag.add(jacobian_product(ga, aa, ga, aa)), router_off.add(jacobian_product(ga, aa, gb, ab));
  }
  RoutingMoments m{diag.mean(),        off.mean(),        diag.se(),        off.se(),
                   router_diag.mean(), router_off.mean(), router_diag.se(), router_off.se()};
  if (k == 1 && r.renormalized) m.diag = 1.0, m.diag_se = 0.0;  // one gate of 1, whose Jacobian is 0
  if (k == 1 && r.renormalized) m.router_diag = m.router_off = m.router_diag_se = m.router_off_se = 0.0;
  if (c == 1.0) {
    m.off = m.diag, m.off_se = m.diag_se;
    m.router_off = m.router_diag, m.router_off_se = m.router_diag_se;
  }
  return m;
}

}  // namespace normsim::theory
