#include "vocab/sublayer_layout.hpp"

#include <stdexcept>

namespace normsim::vocab {

namespace {
using B = BranchKind;
// One row per vocab::Sublayer, in its order (unused branch slots repeat the last).
constexpr std::array<SublayerLayout, 4> kLayouts{{
    {Sublayer::mlp, 1, {B::mlp, B::mlp, B::mlp}},
    {Sublayer::attention, 1, {B::attention, B::attention, B::attention}},
    {Sublayer::transformer, 2, {B::attention, B::mlp, B::mlp}},
    {Sublayer::decoder, 3, {B::attention, B::cross_attention, B::mlp}},
}};
}  // namespace

bool SublayerLayout::has(BranchKind b) const {
  for (int j = 0; j < size; ++j)
    if (branch[static_cast<unsigned>(j)] == b) return true;
  return false;
}

double SublayerLayout::attention_share() const {
  int attending = 0;
  for (int j = 0; j < size; ++j) attending += attends_at(j);
  return double(attending) / double(size);
}

std::string_view branch_name(BranchKind b) {
  return b == BranchKind::mlp ? "mlp" : b == BranchKind::attention ? "attention" : "cross-attention";
}

const SublayerLayout& layout(Sublayer kind) {
  for (const SublayerLayout& l : kLayouts)
    if (l.kind == kind) return l;
  throw std::invalid_argument("vocab::layout: a sublayer kind without a layout row");
}

}  // namespace normsim::vocab
