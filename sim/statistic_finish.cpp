#include "sim/statistic_finish.hpp"

namespace normsim::sim {

double effective_rank_of_eigenvalues(const double* eigenvalues, int n, bool solved) {
  double total = 0;
  for (int i = 0; i < n; ++i) total += singular_value_of(eigenvalues[i]);
  double entropy = 0;
  for (int i = 0; i < n; ++i) entropy += rank_entropy_term(singular_value_of(eigenvalues[i]), total);
  return effective_rank_finish(total, entropy, solved);
}

}  // namespace normsim::sim
