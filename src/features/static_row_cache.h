// StaticRowCache is the hot tier of the feature cache (GIDS's constant CPU buffer): the raw
// rows of a fixed set of hot nodes, chosen before training, stored contiguously behind an
// id -> slot map and never evicted.
//
// Invariants: slot i holds the row of ids()[i] once its owner has filled SlotData(i); memory is
// charged to the budget for the cache's lifetime (charged_bytes()).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "features/id_slot_map.h"
#include "strata/memory_budget.h"

namespace strata {

class StaticRowCache {
 public:
  StaticRowCache(std::vector<uint64_t> ids, uint64_t row_bytes, MemoryBudget& budget);
  ~StaticRowCache();
  StaticRowCache(const StaticRowCache&) = delete;
  StaticRowCache& operator=(const StaticRowCache&) = delete;

  const std::byte* Lookup(uint64_t id) const {
    uint32_t slot = slot_of_.Find(id);
    return slot == IdSlotMap::kNoSlot ? nullptr : rows_.data() + slot * row_bytes_;
  }
  // Where the row of ids()[slot] goes while filling.
  std::byte* SlotData(uint64_t slot) { return rows_.data() + slot * row_bytes_; }

  const std::vector<uint64_t>& ids() const { return ids_; }
  uint64_t charged_bytes() const {
    return rows_.size() + slot_of_.bytes() + ids_.size() * sizeof(uint64_t);
  }

 private:
  std::vector<uint64_t> ids_;
  uint64_t row_bytes_;
  MemoryBudget& budget_;
  ChargedArray<std::byte> rows_;
  IdSlotMap slot_of_;
};

}  // namespace strata
