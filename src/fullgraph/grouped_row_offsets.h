// GroupedRowOffsets holds a CSR file's N + 1 row offsets in a fraction of their size, for a file
// the full-graph trainer walks a run of rows at a time (the graph's adjacency, a block's pieces
// at a time; the sparse features, whose input groups start on multiples of kFullGraphRowGroup
// rows): each row's length in the fewest of 1, 2 or 4 bytes that hold the longest row's, and
// each group's first offset in 64 bits.
// At 1M nodes of ~10 neighbours and ~40 feature nonzeros that is 2.1 MB for both files, where
// the graph's uint64 offsets and the features' 32-bit lengths took 12 MB: memory the budget gives
// to everything else (at 292 MiB on that graph, it is what lets the propagation input fit
// unsliced).
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
  // Reads rows + 1 offsets of `path` in chunks, its lengths stored in LengthBytes(longest)
  // bytes (`longest`: the longest row the plan measured, StreamExtents), checking that they rise
  // from 0 to `end` (CheckRowOffsets) and that no row holds more than `longest` entries (the file
  // changed since) or 2^32 or more; throws an input error naming the file otherwise.
  GroupedRowOffsets(const std::string& path, uint64_t rows, uint64_t end, uint64_t group,
                    uint64_t longest, MemoryBudget& budget, std::string_view what);

  // Bytes a row's length takes when the longest row holds `longest` entries.
  static uint32_t LengthBytes(uint64_t longest);
  // Bytes charged for `rows` rows in groups of `group`, the longest of `longest` entries.
  static uint64_t ChargedBytes(uint64_t rows, uint64_t group, uint64_t longest);

  uint64_t Offset(uint64_t row) const;
  // out[i] = Offset(first + i) for i in [0, out.size()), from any row (out may run over several
  // groups).
  void Offsets(uint64_t first, std::span<uint64_t> out) const;

 private:
  template <typename Length>
  void Fill(uint64_t first, std::span<uint64_t> out) const;

  uint64_t rows_ = 0;
  uint64_t group_ = 1;
  uint32_t length_bytes_ = 4;
  ChargedArray<uint8_t> lengths_;        // rows × length_bytes_, native byte order
  ChargedArray<uint64_t> group_starts_;  // one per group, and the end
};

}  // namespace strata
