// WindowedCache is the dynamic tier of the feature cache: raw rows of recently read nodes in
// a fixed number of slots, evicted by a CachePolicy (CLOCK, SIEVE or S3-FIFO). Rows named by
// the look-ahead window — the next W batches, known because sampling runs ahead (GIDS §3.4)
// — are pinned: eviction never takes a pinned row, and a row that cannot be admitted
// because every resident row is pinned is simply not cached.
//
// Invariants: size() <= capacity(); every resident id has exactly one slot; a pinned id is
// never evicted; pinned_resident_ counts the resident ids that are pinned; all memory (rows, maps,
// policy) is charged to the budget for the cache's lifetime. Pins are counted, so overlapping
// batches pin and unpin independently; when more distinct ids are pinned than the pin table holds,
// further pins are dropped (and counted), which costs hit rate, never correctness.
//
// Thread safety: none; the fetch thread owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "features/cache_policy.h"
#include "features/id_slot_map.h"
#include "strata/memory_budget.h"

namespace strata {

struct WindowedCacheStats {
  uint64_t admissions = 0;
  uint64_t evictions = 0;
  uint64_t refused = 0;       // admissions skipped because every resident row was pinned
  uint64_t pins_dropped = 0;  // pins not recorded because the pin table was full
};

class WindowedCache {
 public:
  WindowedCache(uint64_t capacity_rows, uint64_t row_bytes, CachePolicyKind policy,
                uint64_t max_pinned_ids, MemoryBudget& budget);
  ~WindowedCache();
  WindowedCache(const WindowedCache&) = delete;
  WindowedCache& operator=(const WindowedCache&) = delete;

  // The cached row of `id`, or nullptr. A hit counts as an access for the policy. The pointer
  // is valid until the next Admit.
  const std::byte* Lookup(uint64_t id);
  // Copies `row` (row_bytes) into the cache, evicting an unpinned row when full.
  void Admit(uint64_t id, const std::byte* row);

  void Pin(std::span<const uint64_t> ids);
  void Unpin(std::span<const uint64_t> ids);
  bool IsPinned(uint64_t id) const { return pin_slot_.Find(id) != IdSlotMap::kNoSlot; }

  uint64_t size() const { return slot_of_.size(); }
  uint64_t capacity() const { return capacity_; }
  uint64_t charged_bytes() const { return rows_.size() + index_bytes_; }
  const WindowedCacheStats& stats() const { return stats_; }

 private:
  uint64_t capacity_;
  uint64_t row_bytes_;
  MemoryBudget& budget_;
  uint64_t index_bytes_ = 0;  // maps, policy and pin table, charged beside the rows
  ChargedArray<std::byte> rows_;
  IdSlotMap slot_of_;
  std::unique_ptr<CachePolicy> policy_;
  uint64_t next_unused_slot_ = 0;
  uint64_t pinned_resident_ = 0;  // resident rows that are pinned
  // Pin counts: pin_slot_ maps an id to its counter in pin_counts_; freed counters are reused.
  IdSlotMap pin_slot_;
  std::vector<uint32_t> pin_counts_;
  std::vector<uint32_t> free_pin_slots_;
  WindowedCacheStats stats_;
};

}  // namespace strata
