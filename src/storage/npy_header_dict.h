// The header dict of a .npy file (strata/npy.h) parsed the way Python's ast.literal_eval
// would for the forms NumPy writes, and for hand-written variants: any key order, any
// whitespace, trailing commas, double quotes, Python 2 "3L" integers. Nothing is evaluated,
// and nesting is bounded, so a corrupt header costs an input error, never a deep recursion.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

// A value of the Python literal subset a .npy header is written in.
struct PyLiteral {
  enum class Kind { kString, kInteger, kBool, kNone, kTuple, kList, kDict };
  Kind kind = Kind::kNone;
  std::string_view source;  // the literal's text in the header, for messages
  std::string text;         // kString
  uint64_t integer = 0;     // kInteger: magnitude
  bool negative = false;    // kInteger
  bool flag = false;        // kBool
  // kTuple and kList: the items; kDict: keys and values alternating.
  std::vector<PyLiteral> items;
};

// Parses `text` as one literal; throws Error::Input ("malformed .npy header: ...") naming
// `path`. The literals' `source` views point into `text`.
PyLiteral ParseNpyHeaderDict(std::string_view text, const std::string& path);

// Shortens a piece of header text for an error message.
std::string NpyHeaderExcerpt(std::string_view text);

}  // namespace strata
