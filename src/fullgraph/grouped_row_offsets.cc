#include "fullgraph/grouped_row_offsets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "dataset/stored_ids.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

template <typename Length>
void StoreLength(uint8_t* lengths, uint64_t row, uint64_t length) {
  const auto narrow = static_cast<Length>(length);
  std::memcpy(lengths + row * sizeof(Length), &narrow, sizeof(Length));
}

// Calls fn(Length{}) with the integer type a row's length is stored as, `bytes` wide.
template <typename Fn>
void WithLengthType(uint32_t bytes, Fn&& fn) {
  switch (bytes) {
    case 1:
      return fn(uint8_t{});
    case 2:
      return fn(uint16_t{});
    default:
      return fn(uint32_t{});
  }
}

template <typename Length>
uint64_t LengthAt(const uint8_t* lengths, uint64_t row) {
  Length length;
  std::memcpy(&length, lengths + row * sizeof(Length), sizeof(Length));
  return length;
}

}  // namespace

GroupedRowOffsets::GroupedRowOffsets(const std::string& path, uint64_t rows, uint64_t end,
                                     uint64_t group, uint64_t longest, MemoryBudget& budget,
                                     std::string_view what)
    : rows_(rows),
      group_(group),
      length_bytes_(LengthBytes(longest)),
      lengths_(budget, rows * length_bytes_, what),
      group_starts_(budget, (rows + group - 1) / group + 1, what) {
  constexpr uint64_t kChunkRows = uint64_t{1} << 20;
  FileReader file(path);
  std::vector<uint64_t> offsets;
  for (uint64_t base = 0; base < rows || base == 0; base += kChunkRows) {
    const uint64_t count = std::min(kChunkRows, rows - base);
    offsets.resize(count + 1);
    file.ReadExact(base * 8, offsets.data(), (count + 1) * 8);
    CheckRowOffsets(offsets, base, rows, end, path);
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t row = base + i, length = offsets[i + 1] - offsets[i];
      if (length > std::min<uint64_t>(longest, std::numeric_limits<uint32_t>::max())) {
        throw Error::Input(
            length > std::numeric_limits<uint32_t>::max()
                ? fmt::format("row {} holds 2^32 entries or more", row)
                : fmt::format("row {} holds {} entries, more than the {} it held when the run "
                              "was planned (the file changed)",
                              row, length, longest),
            path);
      }
      if (row % group == 0) group_starts_[row / group] = offsets[i];
      WithLengthType(length_bytes_,
                     [&](auto type) { StoreLength<decltype(type)>(lengths_.data(), row, length); });
    }
    if (base + count == rows) break;
  }
  group_starts_[group_starts_.size() - 1] = end;
}

uint32_t GroupedRowOffsets::LengthBytes(uint64_t longest) {
  return longest <= std::numeric_limits<uint8_t>::max()    ? 1
         : longest <= std::numeric_limits<uint16_t>::max() ? 2
                                                           : 4;
}

uint64_t GroupedRowOffsets::ChargedBytes(uint64_t rows, uint64_t group, uint64_t longest) {
  return LengthBytes(longest) * rows + 8 * ((rows + group - 1) / group + 1);
}

template <typename Length>
void GroupedRowOffsets::Fill(uint64_t first, std::span<uint64_t> out) const {
  const uint8_t* lengths = lengths_.data();
  uint64_t offset = group_starts_[first / group_];
  for (uint64_t r = first / group_ * group_; r < first; ++r) {
    offset += LengthAt<Length>(lengths, r);
  }
  out[0] = offset;
  for (uint64_t i = 1; i < out.size(); ++i) {
    out[i] = out[i - 1] + LengthAt<Length>(lengths, first + i - 1);
  }
}

uint64_t GroupedRowOffsets::Offset(uint64_t row) const {
  uint64_t offset;
  Offsets(row, {&offset, 1});
  return offset;
}

void GroupedRowOffsets::Offsets(uint64_t first, std::span<uint64_t> out) const {
  if (first + out.size() > rows_ + 1) {
    throw Error::Internal("GroupedRowOffsets: offsets asked past the end");
  }
  if (out.empty()) return;
  if (first == rows_) {
    out[0] = group_starts_[group_starts_.size() - 1];
    return;
  }
  WithLengthType(length_bytes_, [&](auto type) { Fill<decltype(type)>(first, out); });
}

}  // namespace strata
