// Kept by this name for the files that still include it while another branch rewrites them:
// sim/sample_metrics.hpp (WeightGradNorms) and sim/update_pass.hpp (SampleKey, UpdateHooks, CpuWorkspace).
// The hooks are sim/branch_hooks.hpp, the CPU's branches sim/cpu/cpu_branches.hpp; this file goes when those
// two include what they use (docs/architecture.md, section 2).
#pragma once
#include "sim/branch_hooks.hpp"
#include "sim/cpu_matrix.hpp"
#include "sim/cpu_parallel.hpp"
#include "sim/placement.hpp"
#include "sim/stack.hpp"
#include "sim/update_probe.hpp"
#include "sim/value_residual.hpp"
#include "sim/weight_update.hpp"
