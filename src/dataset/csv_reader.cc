#include "dataset/csv_reader.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstring>

#include "strata/error.h"

namespace strata {
namespace {

// A field as errors show it: at most 40 characters.
std::string Shown(std::string_view field) {
  return field.size() <= 40 ? std::string(field) : std::string(field.substr(0, 40)) + "...";
}

}  // namespace

CsvReader::CsvReader(const std::string& path, size_t buffer_bytes)
    : stream_(path), buffer_(buffer_bytes) {}

void CsvReader::Fail(const std::string& what) const {
  throw Error::Input(what, path(), fmt::format("line {}", line_));
}

bool CsvReader::Next() {
  const char* newline = nullptr;
  while (true) {
    newline = static_cast<const char*>(std::memchr(buffer_.data() + begin_, '\n', end_ - begin_));
    if (newline != nullptr || at_end_) break;
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (end_ == buffer_.size()) {
      ++line_;
      Fail(fmt::format("line is longer than {} bytes", buffer_.size()));
    }
    const size_t got = stream_.Read(buffer_.data() + end_, buffer_.size() - end_);
    end_ += got;
    at_end_ = got == 0;
  }
  if (newline == nullptr && begin_ == end_) return false;
  const char* first = buffer_.data() + begin_;
  const char* last = newline != nullptr ? newline : buffer_.data() + end_;
  begin_ = newline != nullptr ? static_cast<size_t>(newline + 1 - buffer_.data()) : end_;
  if (last > first && last[-1] == '\r') --last;
  ++line_;
  if (first == last) Fail("blank line");
  fields_.clear();
  for (const char* p = first;;) {
    const char* comma = static_cast<const char*>(std::memchr(p, ',', last - p));
    fields_.emplace_back(p, (comma != nullptr ? comma : last) - p);
    if (comma == nullptr) break;
    p = comma + 1;
  }
  return true;
}

void CsvReader::ExpectFields(size_t count, std::string_view what) const {
  if (fields_.size() != count) {
    Fail(fmt::format("expected {} comma-separated {}, found {} fields", count, what,
                     fields_.size()));
  }
}

uint64_t CsvReader::Id(size_t k) const {
  const std::string_view field = fields_[k];
  uint64_t value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (!field.empty() && field[0] == '-') {
    Fail(fmt::format("node id {} is negative", Shown(field)));
  }
  if (error == std::errc::result_out_of_range || value > uint64_t{INT64_MAX}) {
    Fail(fmt::format("integer {} is too large", Shown(field)));
  }
  if (error != std::errc() || end != field.data() + field.size()) {
    Fail(fmt::format("expected an integer, found '{}'", Shown(field)));
  }
  return value;
}

float CsvReader::Float(size_t k) const {
  std::string_view field = fields_[k];
  if (!field.empty() && field[0] == '+') field.remove_prefix(1);  // from_chars refuses '+'
  float value = 0;
  const auto [end, error] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (error == std::errc::result_out_of_range) {
    // Below float32's smallest subnormal rounds to zero, as a float64 array's import does.
    double wide = 0;
    std::from_chars(field.data(), field.data() + field.size(), wide);
    if (!(std::fabs(wide) < 1))
      Fail(fmt::format("number {} is out of float32's range", Shown(field)));
    return static_cast<float>(wide);
  }
  if (error != std::errc() || end != field.data() + field.size()) {
    Fail(fmt::format("expected a number, found '{}'", Shown(fields_[k])));
  }
  return value;
}

}  // namespace strata
