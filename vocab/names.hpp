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

// Throws std::invalid_argument("unknown <kind> '<name>' (known: <every name>)").
template <class E>
E parse(std::string_view name) {
  if (const auto v = find<E>(name)) return *v;
  std::string known;
  for (const auto& n : table<E>()) known += (known.empty() ? "" : ", ") + std::string(n.name);
  throw std::invalid_argument("unknown " + std::string(kind_name<E>()) + " '" + std::string(name) +
                              "' (known: " + known + ")");
}

// Every enum with a name table (vocab/names.cpp defines each one's) and what it is called in messages.
#define NORMSIM_NAMED_ENUMS(X)           \
  X(Placement, "placement")              \
  X(PlacementFamily, "placement family") \
  X(Sublayer, "sublayer")                \
  X(Activation, "activation")            \
  X(Norm, "norm")                        \
  X(Loss, "loss")                        \
  X(Init, "init rule")                   \
  X(FinalNorm, "final_norm")             \
  X(Update, "update")                    \
  X(Batches, "batches")                  \
  X(Precision, "precision")              \
  X(Recompute, "recompute")              \
  X(BackendChoice, "backend")            \
  X(LogitScaling, "logit scaling")       \
  X(AttentionGate, "attention gate")     \
  X(MoeGate, "moe gate")                 \
  X(QkNormScope, "qk_norm scope")

template <class E>
inline constexpr bool kNamed = false;
#define NORMSIM_VOCAB_DECLARE(E, kind)     \
  template <>                              \
  std::span<const Named<E>> table<E>();    \
  template <>                              \
  inline std::string_view kind_name<E>() { \
    return kind;                           \
  }                                        \
  template <>                              \
  inline constexpr bool kNamed<E> = true;
NORMSIM_NAMED_ENUMS(NORMSIM_VOCAB_DECLARE)
#undef NORMSIM_VOCAB_DECLARE

// Writes the name (messages, test diagnostics). Only for an enum with a table: another enum (an expression's
// op, a branch kind) streamed by a failed Catch CHECK is written as Catch writes what it cannot name, not as
// a link error.
template <class E>
requires kNamed<E> std::ostream& operator<<(std::ostream& os, E value) {
  return os << name(value);
}

}  // namespace normsim::vocab
