// Integers read out of JSON that Strata wrote but a user may have edited or damaged:
// meta.json and a checkpoint's metadata. nlohmann's get<T>() converts any number with a plain
// cast, so a float beyond T's range is undefined behaviour, a negative count wraps to a huge
// one and 2^32 + 2 classes silently become 2. IntegerField accepts only a JSON integer that
// T can hold.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "strata/error.h"

namespace strata {

// object[key] as T. A missing key throws nlohmann's out_of_range, as object.at(key) does; a
// value that is not an integer in T's range throws an input error naming `source`.
template <typename T>
T IntegerField(const nlohmann::json& object, std::string_view key, std::string_view source) {
  const nlohmann::json& value = object.at(key);
  if (value.is_number_unsigned()) {
    uint64_t v = value.get<uint64_t>();
    if (std::in_range<T>(v)) return static_cast<T>(v);
  } else if (value.is_number_integer()) {
    int64_t v = value.get<int64_t>();
    if (std::in_range<T>(v)) return static_cast<T>(v);
  }
  std::string text = value.dump();
  if (text.size() > 40) text = text.substr(0, 40) + "...";
  throw Error::Input(fmt::format("'{}' is {}, expected an integer from {} to {}", key, text,
                                 std::numeric_limits<T>::min(), std::numeric_limits<T>::max()),
                     source);
}

// The same, or `fallback` when the key is absent (fields later format versions added).
template <typename T>
T IntegerField(const nlohmann::json& object, std::string_view key, T fallback,
               std::string_view source) {
  return object.contains(key) ? IntegerField<T>(object, key, source) : fallback;
}

}  // namespace strata
