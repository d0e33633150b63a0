#include "storage/npy_header_dict.h"

#include <cctype>
#include <limits>
#include <utility>

#include "strata/error.h"

namespace strata {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

class HeaderParser {
 public:
  HeaderParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  PyLiteral ParseWhole() {
    PyLiteral value = ParseValue(0);
    SkipSpace();
    if (pos_ != text_.size()) Fail("unexpected text after the dict");
    return value;
  }

 private:
  // Nesting deeper than any valid header: bounds the recursion on a corrupt file.
  static constexpr int kMaxDepth = 16;

  [[noreturn]] void Fail(std::string_view what) const {
    std::string message = "malformed .npy header: ";
    message += what;
    message +=
        " at header byte " + std::to_string(pos_) + " in \"" + NpyHeaderExcerpt(text_) + "\"";
    throw Error::Input(message, path_);
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsSpace(text_[pos_])) ++pos_;
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  PyLiteral ParseValue(int depth) {
    if (depth > kMaxDepth) Fail("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) Fail("unexpected end");
    size_t start = pos_;
    PyLiteral value;
    char c = text_[pos_];
    if (c == '\'' || c == '"') {
      value = ParseString();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      value = ParseInteger();
    } else if (c == '(') {
      ++pos_;
      value.kind = PyLiteral::Kind::kTuple;
      // "(x)" is x itself in Python; only a comma makes a one-element tuple.
      bool has_comma = ParseItems(')', depth, &value.items);
      if (value.items.size() == 1 && !has_comma) {
        PyLiteral inner = std::move(value.items[0]);
        value = std::move(inner);
      }
    } else if (c == '[') {
      ++pos_;
      value.kind = PyLiteral::Kind::kList;
      ParseItems(']', depth, &value.items);
    } else if (c == '{') {
      ++pos_;
      value.kind = PyLiteral::Kind::kDict;
      ParseDictItems(depth, &value.items);
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      size_t end = pos_;
      while (end < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[end])) || text_[end] == '_')) {
        ++end;
      }
      std::string_view word = text_.substr(pos_, end - pos_);
      if (word == "True" || word == "False") {
        value.kind = PyLiteral::Kind::kBool;
        value.flag = word == "True";
      } else if (word == "None") {
        value.kind = PyLiteral::Kind::kNone;
      } else {
        Fail("unexpected name '" + std::string(word) + "'");
      }
      pos_ = end;
    } else {
      Fail(std::string("unexpected character '") + c + "'");
    }
    value.source = text_.substr(start, pos_ - start);
    return value;
  }

  PyLiteral ParseString() {
    char quote = text_[pos_++];
    PyLiteral value;
    value.kind = PyLiteral::Kind::kString;
    while (true) {
      if (pos_ >= text_.size() || text_[pos_] == '\n') Fail("unterminated string");
      char c = text_[pos_++];
      if (c == quote) break;
      if (c == '\\') {
        if (pos_ >= text_.size()) Fail("unterminated string");
        c = text_[pos_++];
      }
      value.text += c;
    }
    return value;
  }

  PyLiteral ParseInteger() {
    PyLiteral value;
    value.kind = PyLiteral::Kind::kInteger;
    if (text_[pos_] == '-') {
      value.negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !(text_[pos_] >= '0' && text_[pos_] <= '9')) {
      Fail("expected a digit");
    }
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      uint64_t digit = static_cast<uint64_t>(text_[pos_] - '0');
      if (value.integer > (std::numeric_limits<uint64_t>::max() - digit) / 10) {
        Fail("integer too large");
      }
      value.integer = value.integer * 10 + digit;
      ++pos_;
    }
    // Python 2 wrote long integers as "3L"; old .npy files still carry them.
    if (pos_ < text_.size() && (text_[pos_] == 'L' || text_[pos_] == 'l')) ++pos_;
    return value;
  }

  // Parses "item, item, ...]" up to `close`; returns whether any comma was seen.
  bool ParseItems(char close, int depth, std::vector<PyLiteral>* items) {
    bool has_comma = false;
    while (!Consume(close)) {
      items->push_back(ParseValue(depth + 1));
      if (Consume(',')) {
        has_comma = true;
      } else if (!Consume(close)) {
        Fail(std::string("expected ',' or '") + close + "'");
      } else {
        break;
      }
    }
    return has_comma;
  }

  void ParseDictItems(int depth, std::vector<PyLiteral>* items) {
    while (!Consume('}')) {
      items->push_back(ParseValue(depth + 1));
      if (!Consume(':')) Fail("expected ':' after a dict key");
      items->push_back(ParseValue(depth + 1));
      if (!Consume(',')) {
        if (!Consume('}')) Fail("expected ',' or '}'");
        break;
      }
    }
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

}  // namespace

PyLiteral ParseNpyHeaderDict(std::string_view text, const std::string& path) {
  return HeaderParser(text, path).ParseWhole();
}

std::string NpyHeaderExcerpt(std::string_view text) {
  constexpr size_t kMaxChars = 80;
  if (text.size() <= kMaxChars) return std::string(text);
  return std::string(text.substr(0, kMaxChars)) + "...";
}

}  // namespace strata
