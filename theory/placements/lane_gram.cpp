// The lanes' joint Gram: its parts (simultaneous diagonalization) and the backward of a unit's record.
#include "theory/placements/lane_gram.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace normsim::theory::detail {

TokenGram LaneGram::sum(int n) const {
  TokenGram s;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) s = s + (*this)(i, j);
  return s;
}

bool LaneGram::finite() const {
  return std::all_of(entry.begin(), entry.end(),
                     [](TokenGram e) { return std::isfinite(e.diag) && std::isfinite(e.off); });
}

namespace {

// A symmetric n x n matrix (row-major) and its eigenvectors (the columns of v).
struct Symmetric {
  int n;
  std::vector<double> a, v;
  double& at(int i, int j) { return a[std::size_t(i * n + j)]; }
  double& vec(int i, int j) { return v[std::size_t(i * n + j)]; }
};

// One Jacobi rotation zeroing a_pq (Golub & Van Loan, Matrix Computations, 4th ed., Algorithm 8.5.1, the
// symmetric Schur decomposition), applied to both sides of a and to the columns of v.
void rotate(Symmetric& s, int p, int q) {
  const double apq = s.at(p, q);
  if (apq == 0.0) return;
  const double theta = (s.at(q, q) - s.at(p, p)) / (2.0 * apq);
  const double t = (theta >= 0.0 ? 1.0 : -1.0) / (std::abs(theta) + std::sqrt(theta * theta + 1.0));
  const double c = 1.0 / std::sqrt(t * t + 1.0), sn = t * c;
  for (int k = 0; k < s.n; ++k) {
    const double kp = s.at(k, p), kq = s.at(k, q);
    s.at(k, p) = c * kp - sn * kq, s.at(k, q) = sn * kp + c * kq;
  }
  for (int k = 0; k < s.n; ++k) {
    const double pk = s.at(p, k), qk = s.at(q, k);
    s.at(p, k) = c * pk - sn * qk, s.at(q, k) = sn * pk + c * qk;
    const double vp = s.vec(k, p), vq = s.vec(k, q);
    s.vec(k, p) = c * vp - sn * vq, s.vec(k, q) = sn * vp + c * vq;
  }
}

// Cyclic Jacobi sweeps until the off-diagonal part is below rounding (Golub & Van Loan Algorithm 8.5.3); the
// matrices here are at most a few lanes wide.
Symmetric eigen(int n, std::vector<double> a) {
  Symmetric s{n, std::move(a), std::vector<double>(std::size_t(n) * std::size_t(n), 0.0)};
  for (int i = 0; i < n; ++i) s.vec(i, i) = 1.0;
  for (int sweep = 0; sweep < 64; ++sweep) {
    double off = 0.0, all = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) (i == j ? all : off) += s.at(i, j) * s.at(i, j);
    if (off <= 1e-32 * (all + off)) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) rotate(s, p, q);
  }
  return s;
}

// Eigenvalues of A at or below this fraction of the largest are rounding (the entries of A carry relative
// errors of a few ulps per unit), and their directions are dropped.
constexpr double kRankFloor = 1e-12;

}  // namespace

LaneParts lane_parts(const LaneGram& g) {
  const int m = g.m;
  std::vector<double> a(std::size_t(m) * std::size_t(m));
  for (int i = 0; i < m * m; ++i) a[std::size_t(i)] = g.entry[std::size_t(i)].diag;
  Symmetric ea = eigen(m, std::move(a));
  double top = 0.0;
  for (int i = 0; i < m; ++i) top = std::max(top, ea.at(i, i));
  std::vector<int> kept;
  for (int i = 0; i < m; ++i)
    if (ea.at(i, i) > kRankFloor * top) kept.push_back(i);
  const int r = int(kept.size());
  if (r == 0) return {1, std::vector<double>(std::size_t(m), 0.0), {0.0}};
  // u[i][p] = U_ip S_p^1/2 and its pseudo-inverse rows w[p][i] = U_ip S_p^-1/2.
  std::vector<double> u(std::size_t(m * r)), w(std::size_t(r * m));
  for (int p = 0; p < r; ++p) {
    const double s = ea.at(kept[std::size_t(p)], kept[std::size_t(p)]);
    for (int i = 0; i < m; ++i) {
      const double e = ea.vec(i, kept[std::size_t(p)]);
      u[std::size_t(i * r + p)] = e * std::sqrt(s), w[std::size_t(p * m + i)] = e / std::sqrt(s);
    }
  }
  std::vector<double> wb(std::size_t(r * r), 0.0);  // W = w B w^T
  for (int p = 0; p < r; ++p)
    for (int q = 0; q < r; ++q)
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < m; ++j)
          wb[std::size_t(p * r + q)] += w[std::size_t(p * m + i)] * g(i, j).off * w[std::size_t(q * m + j)];
  Symmetric eb = eigen(r, std::move(wb));
  LaneParts out{r, std::vector<double>(std::size_t(m * r), 0.0), std::vector<double>(std::size_t(r))};
  for (int p = 0; p < r; ++p) {
    out.off[std::size_t(p)] = eb.at(p, p);
    for (int i = 0; i < m; ++i)
      for (int q = 0; q < r; ++q)
        out.coef[std::size_t(i * r + p)] += u[std::size_t(i * r + q)] * eb.vec(q, p);
  }
  return out;
}

namespace {

// The Gram between two gradient combinations a and b (rows of a LaneRecord): sum_{i,i'} a_i b_i' G(i, i')
// over the outputs' gradients plus sum_f a_f b_f Phi_f over the fresh components.
TokenGram combination(const std::vector<double>& a, const std::vector<double>& b, const LaneGram& g,
                      const std::vector<TokenGram>& phi) {
  TokenGram c;
  for (int i = 0; i < g.m; ++i)
    for (int j = 0; j < g.m; ++j)
      if (a[std::size_t(i)] != 0.0 && b[std::size_t(j)] != 0.0)
        c = c + (a[std::size_t(i)] * b[std::size_t(j)]) * g(i, j);
  for (std::size_t f = 0; f < phi.size(); ++f)
    c = c + (a[std::size_t(g.m) + f] * b[std::size_t(g.m) + f]) * phi[f];
  return c;
}

}  // namespace

LaneGram back(const LaneRecord& r, const LaneGram& g, std::span<TokenGram> branch,
              std::span<TokenGram> inner) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  if (r.m == 0) {
    std::fill(branch.begin(), branch.end(), TokenGram{kNaN, kNaN});
    std::fill(inner.begin(), inner.end(), TokenGram{kNaN, kNaN});
    return LaneGram(g.m, {kNaN, kNaN});
  }
  std::vector<TokenGram> phi;
  for (const LaneRecord::Fresh& f : r.fresh) {
    const TokenGram at_output = combination(f.coef, f.coef, g, phi);
    branch[std::size_t(f.slot)] = at_output;
    phi.push_back(f.back(at_output));
  }
  LaneGram in(r.m, {});
  for (int i = 0; i < r.m; ++i)
    for (int j = 0; j < r.m; ++j)
      in(i, j) = combination(r.input[std::size_t(i)], r.input[std::size_t(j)], g, phi);
  for (std::size_t j = 0; j < r.inner.size(); ++j) inner[j] = combination(r.inner[j], r.inner[j], g, phi);
  return in;
}

}  // namespace normsim::theory::detail
