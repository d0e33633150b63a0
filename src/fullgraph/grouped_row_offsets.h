// GroupedRowOffsets holds a CSR file's N + 1 row offsets in half their size, for a file the
// full-graph trainer walks a run of rows at a time (the sparse features, whose input groups
// start on multiples of kFullGraphRowGroup rows): each row's length in 32 bits and each
// kFullGraphRowGroup's first offset in 64.
// At 4M nodes that is 16 MB instead of 32 MB, for memory the budget gives to everything else.
//
// Invariant: Offset(r) is the file's offsets[r] for every r in [0, rows].
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "strata/memory_budget.h"

namespace strata {

class GroupedRowOffsets {
 public:
  GroupedRowOffsets() = default;
  // Reads rows + 1 offsets of `path` in chunks, checking that they rise from 0 to `end` and
  // that no row holds 2^32 entries or more; throws an input error naming the file otherwise.
  GroupedRowOffsets(const std::string& path, uint64_t rows, uint64_t end, uint64_t group,
                    MemoryBudget& budget, std::string_view what);

  // Bytes charged for `rows` rows in groups of `group`.
  static uint64_t ChargedBytes(uint64_t rows, uint64_t group);

  uint64_t Offset(uint64_t row) const;
  // out[i] = Offset(first + i) for i in [0, out.size()); `first` starts a group (out may run
  // over several).
  void Offsets(uint64_t first, std::span<uint64_t> out) const;

 private:
  uint64_t rows_ = 0;
  uint64_t group_ = 1;
  ChargedArray<uint32_t> lengths_;       // rows
  ChargedArray<uint64_t> group_starts_;  // one per group, and the end
};

}  // namespace strata
