// EnumNames is the table of an enum's values and the names users type for them (--model sage,
// --topology disk), so that parsing a name and naming a value agree by construction and every
// unknown name gets the same one-line error listing what is accepted.
//
// Invariant: each value and each name appears once in a table.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "strata/error.h"

namespace strata {

template <typename Enum, size_t N>
class EnumNames {
 public:
  // `what` names the option in errors, e.g. "model".
  constexpr EnumNames(std::string_view what, std::array<std::pair<Enum, std::string_view>, N> table)
      : what_(what), table_(table) {}

  Enum Parse(std::string_view name) const {
    for (const auto& [value, value_name] : table_) {
      if (value_name == name) return value;
    }
    std::string expected;
    for (size_t i = 0; i < N; ++i) {
      if (i > 0) expected += i + 1 == N ? " or " : ", ";
      expected += table_[i].second;
    }
    throw Error::Input("unknown " + std::string(what_) + " '" + std::string(name) + "': expected " +
                       expected);
  }

  std::string_view Name(Enum value) const {
    for (const auto& [table_value, name] : table_) {
      if (table_value == value) return name;
    }
    return "?";
  }

 private:
  std::string_view what_;
  std::array<std::pair<Enum, std::string_view>, N> table_;
};

}  // namespace strata
