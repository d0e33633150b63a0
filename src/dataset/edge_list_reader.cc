#include "dataset/edge_list_reader.h"

#include <fmt/format.h>

#include <cstring>

#include "common/interrupt.h"
#include "strata/dataset.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr size_t kBatchEdges = size_t{1} << 16;

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

std::string Token(const char* begin, const char* end) {
  const char* stop = begin;
  while (stop < end && !IsBlank(*stop) && *stop != '#') ++stop;
  std::string token(begin, stop);
  if (token.size() > 40) token = token.substr(0, 40) + "...";
  return token;
}

}  // namespace

EdgeListReader::EdgeListReader(const std::string& path, std::optional<uint64_t> num_nodes,
                               size_t buffer_bytes)
    : file_(path), num_nodes_(num_nodes), buffer_bytes_(buffer_bytes) {
  src_.reserve(kBatchEdges);
  dst_.reserve(kBatchEdges);
}

void EdgeListReader::Fail(const std::string& what) const {
  throw Error::Input(what, file_.path(), std::to_string(line_));
}

void EdgeListReader::ParseLine(const char* p, const char* end) {
  uint64_t ids[2];
  int count = 0;
  while (true) {
    while (p < end && IsBlank(*p)) ++p;
    if (p == end || *p == '#') break;
    if (count == 2) Fail(fmt::format("extra token '{}' after the two node ids", Token(p, end)));
    if (*p == '-') {
      const char* q = p + 1;
      while (q < end && *q >= '0' && *q <= '9') ++q;
      if (q > p + 1 && (q == end || IsBlank(*q) || *q == '#')) {
        Fail(fmt::format("node id {} is negative", std::string(p, q)));
      }
      Fail(fmt::format("expected a node id, found '{}'", Token(p, end)));
    }
    const char* start = p;
    uint64_t value = 0;
    bool overflow = false;
    while (p < end && *p >= '0' && *p <= '9') {
      uint64_t digit = static_cast<uint64_t>(*p - '0');
      if (value > (UINT64_MAX - digit) / 10) overflow = true;
      value = value * 10 + digit;
      ++p;
    }
    if (p == start || (p < end && !IsBlank(*p) && *p != '#')) {
      Fail(fmt::format("expected a node id, found '{}'", Token(start, end)));
    }
    if (overflow || value >= kMaxNodeIds) {
      Fail(fmt::format("node id {} is too large (ids must be below 2^48)", Token(start, end)));
    }
    if (num_nodes_ && value >= *num_nodes_) {
      Fail(fmt::format("node id {} is >= num_nodes {}", value, *num_nodes_));
    }
    ids[count++] = value;
  }
  if (count == 0) return;
  if (count == 1) Fail("expected two node ids, found one");
  src_.push_back(ids[0]);
  dst_.push_back(ids[1]);
  max_id_ = std::max({max_id_, ids[0], ids[1]});
  any_edge_ = true;
}

void EdgeListReader::ReadAll(const BatchFn& on_batch) {
  std::vector<char> buffer(buffer_bytes_);
  size_t carried = 0;  // bytes of an unfinished line kept at the front of the buffer
  auto flush = [&] {
    if (!src_.empty()) on_batch(src_, dst_);
    src_.clear();
    dst_.clear();
  };
  while (true) {
    if (carried == buffer.size()) {
      ++line_;
      Fail(fmt::format("line is longer than {} bytes", buffer.size()));
    }
    size_t got = file_.ReadSome(offset_, buffer.data() + carried, buffer.size() - carried);
    offset_ += got;
    size_t filled = carried + got;
    bool at_end = got == 0;
    const char* p = buffer.data();
    const char* end = buffer.data() + filled;
    while (true) {
      const char* newline = static_cast<const char*>(std::memchr(p, '\n', end - p));
      if (newline == nullptr) {
        if (!at_end) break;
        if (p < end) {
          ++line_;
          ParseLine(p, end);
        }
        p = end;
        break;
      }
      ++line_;
      ParseLine(p, newline);
      p = newline + 1;
      if (src_.size() >= kBatchEdges) flush();
    }
    if (at_end) break;
    carried = static_cast<size_t>(end - p);
    std::memmove(buffer.data(), p, carried);
    flush();
    ThrowIfInterrupted();
  }
  flush();
}

}  // namespace strata
