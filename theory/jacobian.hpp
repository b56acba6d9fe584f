// Mean field of the input-output Jacobian's mean squared singular value, jac_sq_l = ||dx_K/dx_l||_F^2 / n
// (n = T d; metric definition: docs/metrics.md "Jacobians"). Pure and host-only.
#pragma once
#include <optional>
#include <span>
#include <vector>

namespace normsim::theory {

// jac_sq_l from the mean field's backward recursion: g_l, the second moment per entry of a gradient seeded
// at x_K with independent entries (g_K its seed). [DERIVED, docs/theory_notes.md "Jacobian"]: for u uniform
// on the unit sphere, E||J^T u||^2 = ||J||_F^2/n, and u has independent-entry statistics (second moment 1/n,
// no token cross moment) at large n, like the readout seed; the backward maps are linear in the gradient's
// token Gram, so E||J^T u||^2 = n (1/n) g_l/g_K = g_l/g_K whatever the seed's scale (a final norm's
// factor cancels). Dynamical isometry (Pennington, Schoenholz & Ganguli 2017, arXiv 1711.04735) asks this to
// stay 1 at every l. Entries with a non-finite or zero g_K, or a non-finite g_l, are nullopt.
std::vector<std::optional<double>> jacobian_sq(std::span<const double> grad_second_moment);

}  // namespace normsim::theory
