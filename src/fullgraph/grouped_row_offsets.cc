#include "fullgraph/grouped_row_offsets.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "storage/file.h"
#include "strata/error.h"

namespace strata {

GroupedRowOffsets::GroupedRowOffsets(const std::string& path, uint64_t rows, uint64_t end,
                                     uint64_t group, MemoryBudget& budget, std::string_view what)
    : rows_(rows),
      group_(group),
      lengths_(budget, rows, what),
      group_starts_(budget, (rows + group - 1) / group + 1, what) {
  constexpr uint64_t kChunkRows = uint64_t{1} << 20;
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
      if (row % group == 0) group_starts_[row / group] = offsets[i];
      lengths_[row] = static_cast<uint32_t>(offsets[i + 1] - offsets[i]);
    }
    if (base + count == rows) {
      if (offsets[count] != end) {
        throw Error::Input(fmt::format("offsets do not run from 0 to {}", end), path);
      }
      group_starts_[group_starts_.size() - 1] = end;
      break;
    }
  }
}

uint64_t GroupedRowOffsets::ChargedBytes(uint64_t rows, uint64_t group) {
  return 4 * rows + 8 * ((rows + group - 1) / group + 1);
}

uint64_t GroupedRowOffsets::Offset(uint64_t row) const {
  if (row == rows_) return group_starts_[group_starts_.size() - 1];
  uint64_t offset = group_starts_[row / group_];
  for (uint64_t r = row / group_ * group_; r < row; ++r) offset += lengths_[r];
  return offset;
}

void GroupedRowOffsets::Offsets(uint64_t first, std::span<uint64_t> out) const {
  if (first % group_ != 0 || first + out.size() > rows_ + 1) {
    throw Error::Internal("GroupedRowOffsets: offsets asked from inside a group or past the end");
  }
  if (out.empty()) return;
  out[0] = Offset(first);
  for (uint64_t i = 1; i < out.size(); ++i) out[i] = out[i - 1] + lengths_[first + i - 1];
}

}  // namespace strata
