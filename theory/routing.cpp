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
// the selected.
void gates(const RoutedMlp& r, const std::vector<double>& z, std::vector<int>& order,
           std::vector<double>& g) {
  const int E = r.experts;
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + r.top_k, order.end(),
                    [&](int a, int b) { return z[a] > z[b] || (z[a] == z[b] && a < b); });
  const double mx = z[std::size_t(order[0])];
  double all = 0, selected = 0;
  for (int e = 0; e < E; ++e) all += std::exp(z[std::size_t(e)] - mx);
  for (int j = 0; j < r.top_k; ++j) selected += std::exp(z[std::size_t(order[j])] - mx);
  std::fill(g.begin(), g.end(), 0.0);
  for (int j = 0; j < r.top_k; ++j) {
    const auto e = std::size_t(order[j]);
    g[e] = std::exp(z[e] - mx) / (r.renormalized ? selected : all);
  }
}

}  // namespace

RoutingMoments gate_moments(const RoutedMlp& r, double s_sq, double rho) {
  const int E = r.experts, k = r.top_k;
  if (E < 1 || k < 1 || k > E) throw std::invalid_argument("routed MLP: need 1 <= moe_top_k <= moe_experts");
  if (!(s_sq >= 0.0) || !std::isfinite(s_sq)) return {NAN, NAN, 0.0, 0.0};
  RoutingMoments m;
  if (s_sq == 0.0) {  // every logit 0: the lowest k experts, gates 1/k or 1/E
    const double g = r.renormalized ? 1.0 / k : 1.0 / E;
    m.diag = m.off = k * g * g;
    return m;
  }
  const double s = std::sqrt(s_sq), c = std::clamp(rho, -1.0, 1.0), c2 = std::sqrt(1.0 - c * c);
  const std::vector<double>& v = normals(E);
  const auto n_e = static_cast<std::size_t>(E);
  std::vector<double> za(n_e), zb(n_e), ga(n_e), gb(n_e);
  std::vector<int> order(n_e);
  double sd = 0, sd2 = 0, so = 0, so2 = 0;
  for (int n = 0; n < kDraws; ++n) {
    const double* x = v.data() + std::size_t(2) * E * n;
    const double* y = x + E;
    for (int e = 0; e < E; ++e)
      za[std::size_t(e)] = s * x[e], zb[std::size_t(e)] = s * (c * x[e] + c2 * y[e]);
    gates(r, za, order, ga);
    gates(r, zb, order, gb);
    double d = 0, o = 0;
    for (int e = 0; e < E; ++e)
      d += ga[std::size_t(e)] * ga[std::size_t(e)], o += ga[std::size_t(e)] * gb[std::size_t(e)];
    sd += d, sd2 += d * d, so += o, so2 += o * o;
  }
  const double N = kDraws;
  m.diag = sd / N, m.off = so / N;
  m.diag_se = std::sqrt(std::max(0.0, sd2 / N - m.diag * m.diag) / N);
  m.off_se = std::sqrt(std::max(0.0, so2 / N - m.off * m.off) / N);
  if (k == 1 && r.renormalized) m.diag = 1.0, m.diag_se = 0.0;  // one gate of 1
  if (c == 1.0) m.off = m.diag, m.off_se = m.diag_se;
  return m;
}

}  // namespace normsim::theory
