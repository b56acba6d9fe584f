// Dense matrices of the CPU backend: row-major so a token is a contiguous row (as in llm.c's (T, C)).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

namespace normsim::sim {

template <class R>
using Mat = Eigen::Matrix<R, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

}  // namespace normsim::sim
