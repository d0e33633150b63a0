// EdgeListReader parses a SNAP-style edge list: one edge "src dst" per line, ids as decimal
// integers separated by spaces or tabs, '#' starting a comment, blank lines and CRLF line
// ends allowed. It streams the file through a fixed buffer and hands edges out in batches,
// so memory does not depend on the file's size. Errors name the file and line.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "storage/file.h"

namespace strata {

class EdgeListReader {
 public:
  using BatchFn = std::function<void(std::span<const uint64_t> src, std::span<const uint64_t> dst)>;

  // Bytes read per step, which is also the longest line accepted.
  static constexpr size_t kDefaultBufferBytes = size_t{8} << 20;

  // Ids must be below `num_nodes` when it is known, and below kMaxNodeIds in any case.
  // Tests and the fuzzer pass a small `buffer_bytes`, so that lines straddle reads.
  EdgeListReader(const std::string& path, std::optional<uint64_t> num_nodes,
                 size_t buffer_bytes = kDefaultBufferBytes);

  // Parses the whole file, calling `on_batch` with successive batches of edges.
  void ReadAll(const BatchFn& on_batch);

  uint64_t max_id_seen() const { return max_id_; }
  bool any_edge() const { return any_edge_; }
  uint64_t bytes() const { return file_.size(); }
  // Bytes consumed so far, for progress.
  uint64_t bytes_done() const { return offset_; }

 private:
  // Parses one complete line [begin, end); `line` is its 1-based number.
  void ParseLine(const char* begin, const char* end);
  [[noreturn]] void Fail(const std::string& what) const;

  FileReader file_;
  std::optional<uint64_t> num_nodes_;
  size_t buffer_bytes_;
  uint64_t offset_ = 0;
  uint64_t line_ = 0;
  uint64_t max_id_ = 0;
  bool any_edge_ = false;
  std::vector<uint64_t> src_, dst_;
};

}  // namespace strata
