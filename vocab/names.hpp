// The name tables of the vocabulary: each enum value's config name and one-line meaning, in the order
// `normsim list` shows them. name() and parse() are the only places a name meets its enum.
#pragma once
#include <optional>
#include <ostream>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "vocab/enums.hpp"

namespace normsim::vocab {

template <class E>
struct Named {
  E value;
  std::string_view name;
  std::string_view meaning;  // one line ("" where a registry elsewhere describes it: placements)
};

// Every value of E with its name, and what E is called in messages ("placement").
template <class E>
std::span<const Named<E>> table();
template <class E>
std::string_view kind_name();

template <class E>
std::string_view name(E value) {
  for (const auto& n : table<E>())
    if (n.value == value) return n.name;
  return "?";
}

template <class E>
std::string_view meaning(E value) {
  for (const auto& n : table<E>())
    if (n.value == value) return n.meaning;
  return "";
}

template <class E>
std::optional<E> find(std::string_view name) {
  for (const auto& n : table<E>())
    if (n.name == name) return n.value;
  return std::nullopt;
}

// Throws std::invalid_argument("unknown <kind> '<name>'").
template <class E>
E parse(std::string_view name) {
  if (const auto v = find<E>(name)) return *v;
  throw std::invalid_argument("unknown " + std::string(kind_name<E>()) + " '" + std::string(name) + "'");
}

// Writes the name (messages, test diagnostics).
template <class E>
requires std::is_enum_v<E> std::ostream& operator<<(std::ostream& os, E value) {
  return os << name(value);
}

#define NORMSIM_VOCAB_DECLARE(E)        \
  template <>                           \
  std::span<const Named<E>> table<E>(); \
  template <>                           \
  std::string_view kind_name<E>();
NORMSIM_VOCAB_DECLARE(Placement)
NORMSIM_VOCAB_DECLARE(PlacementFamily)
NORMSIM_VOCAB_DECLARE(Sublayer)
NORMSIM_VOCAB_DECLARE(Activation)
NORMSIM_VOCAB_DECLARE(Norm)
NORMSIM_VOCAB_DECLARE(Loss)
NORMSIM_VOCAB_DECLARE(Init)
NORMSIM_VOCAB_DECLARE(FinalNorm)
NORMSIM_VOCAB_DECLARE(Update)
NORMSIM_VOCAB_DECLARE(Batches)
NORMSIM_VOCAB_DECLARE(Precision)
NORMSIM_VOCAB_DECLARE(Recompute)
NORMSIM_VOCAB_DECLARE(BackendChoice)
NORMSIM_VOCAB_DECLARE(LogitScaling)
NORMSIM_VOCAB_DECLARE(AttentionGate)
NORMSIM_VOCAB_DECLARE(MoeGate)
NORMSIM_VOCAB_DECLARE(QkNormScope)
#undef NORMSIM_VOCAB_DECLARE

}  // namespace normsim::vocab
