// CsvReader streams the lines of a comma-separated file, gzip-compressed or not (OGB's
// .csv.gz), through a fixed buffer, and parses their fields as numbers. No header line, no
// quoting: OGB's files hold numbers only. CRLF line ends and a last line without a newline are
// accepted; blank lines are not. Errors name the file and the 1-based line.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "storage/gzip_stream.h"

namespace strata {

class CsvReader {
 public:
  // Bytes held at once, which is also the longest line accepted. Tests and the fuzzer pass a
  // small one, so that lines straddle reads.
  static constexpr size_t kDefaultBufferBytes = size_t{8} << 20;

  explicit CsvReader(const std::string& path, size_t buffer_bytes = kDefaultBufferBytes);

  // Moves to the next line; false at the end of the file.
  bool Next();

  uint64_t line() const { return line_; }
  size_t fields() const { return fields_.size(); }
  // Throws unless the line has exactly `count` fields; `what` says what they are.
  void ExpectFields(size_t count, std::string_view what) const;
  // Field `k` as a non-negative integer below 2^63.
  uint64_t Id(size_t k) const;
  // Field `k` as a float32: decimal or scientific, "nan" and "inf" in any case.
  float Float(size_t k) const;

  const std::string& path() const { return stream_.path(); }
  uint64_t file_bytes() const { return stream_.file_bytes(); }
  uint64_t file_bytes_done() const { return stream_.file_bytes_done(); }

  [[noreturn]] void Fail(const std::string& what) const;

 private:
  GzipStream stream_;
  std::vector<char> buffer_;
  size_t begin_ = 0, end_ = 0;  // unread bytes: buffer_[begin_, end_)
  bool at_end_ = false;
  uint64_t line_ = 0;
  std::vector<std::string_view> fields_;
};

}  // namespace strata
