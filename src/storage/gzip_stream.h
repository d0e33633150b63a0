// GzipStream reads a file sequentially, inflating it when it is gzip (RFC 1952, as OGB's
// .csv.gz files and `gzip` write it; concatenated members are read one after another) and
// passing it through unchanged when it does not start with gzip's magic. Fixed buffers, so
// memory does not depend on the file's size.
//
// Errors name the file: a gzip stream that ends before its last member's trailer is
// "truncated", corrupt data and a bad CRC are input errors, read failures system errors.
#pragma once

#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "storage/file.h"

namespace strata {

class GzipStream {
 public:
  static constexpr size_t kInputBytes = size_t{1} << 20;

  explicit GzipStream(const std::string& path);
  ~GzipStream();
  GzipStream(const GzipStream&) = delete;
  GzipStream& operator=(const GzipStream&) = delete;

  // Reads up to `bytes` of the (inflated) content into `out`; returns how many, 0 at its end.
  size_t Read(char* out, size_t bytes);

  const std::string& path() const { return file_.path(); }
  // The file's size and how much of it has been consumed, for progress.
  uint64_t file_bytes() const { return file_.size(); }
  uint64_t file_bytes_done() const { return offset_; }

 private:
  // Refills the input buffer when it is empty; returns false at the end of the file.
  bool Refill();

  FileReader file_;
  bool gzip_ = false;
  bool member_ended_ = false;  // the last member read so far is complete
  uint64_t offset_ = 0;
  std::vector<unsigned char> input_;
  z_stream stream_{};
};

}  // namespace strata
