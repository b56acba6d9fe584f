// The metrics of one stream matrix x_l (T x d) and of consecutive pairs, in double precision.
// Definitions: sim/metrics_table.cpp and docs/metrics.md.
#pragma once
#include "sim/cpu_matrix.hpp"

namespace normsim::sim {

using MatD = Mat<double>;

double mean_square(const MatD& x);
double mean_abs(const MatD& x);
double max_abs(const MatD& x);
double token_cosine(const MatD& x);    // NaN for a single token
double effective_rank(const MatD& x);  // Roy & Vetterli 2007
double mean_token_cosine(const MatD& a, const MatD& b);
double mean_relative_update(const MatD& before, const MatD& after);
bool all_finite(const MatD& x);

}  // namespace normsim::sim
