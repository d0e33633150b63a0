#include "fullgraph/grouped_row_offsets.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kChunkRows = uint64_t{1} << 20;

// Calls fn(row, offsets[row], offsets[row + 1]) for every row of the file, checked as the
// constructor says.
template <typename Fn>
void ForEachRow(const std::string& path, uint64_t rows, uint64_t end, Fn&& fn) {
  FileReader file(path);
  std::vector<uint64_t> offsets;
  for (uint64_t base = 0; base < rows || base == 0; base += kChunkRows) {
    const uint64_t count = std::min(kChunkRows, rows - base);
    offsets.resize(count + 1);
    file.ReadExact(base * 8, offsets.data(), (count + 1) * 8);
    if (base == 0 && offsets[0] != 0) {
      throw Error::Input(fmt::format("offsets do not run from 0 to {}", end), path);
    }
    for (uint64_t i = 0; i < count; ++i) {
      const uint64_t row = base + i;
      if (offsets[i + 1] < offsets[i]) {
        throw Error::Input(fmt::format("offsets decrease at row {}", row), path);
      }
      if (offsets[i + 1] - offsets[i] > std::numeric_limits<uint32_t>::max()) {
        throw Error::Input(fmt::format("row {} holds 2^32 entries or more", row), path);
      }
      fn(row, offsets[i], offsets[i + 1]);
    }
    if (base + count == rows) {
      if (offsets[count] != end) {
        throw Error::Input(fmt::format("offsets do not run from 0 to {}", end), path);
      }
      break;
    }
  }
}

// A row's length in the `bytes` at `at` (1, 2 or 4 of them, as its width's integer).
void StoreLength(uint8_t* at, uint32_t length, uint32_t bytes) {
  if (bytes == 1) {
    const auto narrow = static_cast<uint8_t>(length);
    std::memcpy(at, &narrow, 1);
  } else if (bytes == 2) {
    const auto narrow = static_cast<uint16_t>(length);
    std::memcpy(at, &narrow, 2);
  } else {
    std::memcpy(at, &length, 4);
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
                                     uint64_t group, MemoryBudget& budget, std::string_view what)
    : rows_(rows), group_(group) {
  uint64_t longest = 0;
  ForEachRow(path, rows, end,
             [&](uint64_t, uint64_t from, uint64_t to) { longest = std::max(longest, to - from); });
  length_bytes_ = LengthBytes(longest);
  lengths_ = ChargedArray<uint8_t>(budget, rows * length_bytes_, what);
  group_starts_ = ChargedArray<uint64_t>(budget, (rows + group - 1) / group + 1, what);
  ForEachRow(path, rows, end, [&](uint64_t row, uint64_t from, uint64_t to) {
    if (row % group == 0) group_starts_[row / group] = from;
    if (to - from > longest) {
      throw Error::Input(fmt::format("changed while it was read (row {})", row), path);
    }
    StoreLength(lengths_.data() + row * length_bytes_, static_cast<uint32_t>(to - from),
                length_bytes_);
  });
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
  if (row == rows_) return group_starts_[group_starts_.size() - 1];
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
  switch (length_bytes_) {
    case 1:
      return Fill<uint8_t>(first, out);
    case 2:
      return Fill<uint16_t>(first, out);
    default:
      return Fill<uint32_t>(first, out);
  }
}

}  // namespace strata
