#include "features/windowed_cache.h"

#include <cstring>

namespace strata {

WindowedCache::WindowedCache(uint64_t capacity_rows, uint64_t row_bytes, CachePolicyKind policy,
                             uint64_t max_pinned_ids, MemoryBudget& budget)
    : capacity_(capacity_rows),
      row_bytes_(row_bytes),
      budget_(budget),
      rows_(budget, capacity_rows * row_bytes, "the dynamic cache tier"),
      slot_of_(capacity_rows),
      policy_(MakeCachePolicy(policy, capacity_rows)),
      pin_slot_(max_pinned_ids) {
  index_bytes_ = slot_of_.bytes() + policy_->bytes() + pin_slot_.bytes() +
                 max_pinned_ids * sizeof(uint32_t) * 2;
  budget_.Charge(index_bytes_, "the dynamic cache tier's index");
  pin_counts_.resize(max_pinned_ids);
  free_pin_slots_.reserve(max_pinned_ids);
  for (uint64_t i = max_pinned_ids; i > 0; --i) free_pin_slots_.push_back(i - 1);
}

WindowedCache::~WindowedCache() { budget_.Release(index_bytes_); }

const std::byte* WindowedCache::Lookup(uint64_t id) {
  uint32_t slot = slot_of_.Find(id);
  if (slot == IdSlotMap::kNoSlot) return nullptr;
  policy_->Touch(id);
  return rows_.data() + slot * row_bytes_;
}

void WindowedCache::Admit(uint64_t id, const std::byte* row) {
  if (capacity_ == 0 || slot_of_.Find(id) != IdSlotMap::kNoSlot) return;
  const bool pinned = IsPinned(id);
  uint64_t slot;
  if (next_unused_slot_ < capacity_) {
    slot = next_unused_slot_++;
  } else {
    // When the window claims most of the cache, a row it does not name (it is not read in
    // the next W batches) is not worth a victim; and a full cache of pinned rows has none to
    // give. Both checks keep eviction from scanning a cache of pinned rows on every miss.
    if (pinned_resident_ == capacity_ || (!pinned && 4 * pinned_resident_ >= 3 * capacity_)) {
      ++stats_.refused;
      return;
    }
    std::optional<uint64_t> victim = policy_->Evict([this](uint64_t key) { return IsPinned(key); });
    if (!victim) {
      ++stats_.refused;
      return;
    }
    slot = slot_of_.Find(*victim);
    slot_of_.Erase(*victim);
    ++stats_.evictions;
  }
  std::memcpy(rows_.data() + slot * row_bytes_, row, row_bytes_);
  slot_of_.Insert(id, static_cast<uint32_t>(slot));
  policy_->Insert(id);
  pinned_resident_ += pinned;
  ++stats_.admissions;
}

void WindowedCache::Pin(std::span<const uint64_t> ids) {
  for (uint64_t id : ids) {
    uint32_t slot = pin_slot_.Find(id);
    if (slot != IdSlotMap::kNoSlot) {
      ++pin_counts_[slot];
    } else if (!free_pin_slots_.empty()) {
      slot = free_pin_slots_.back();
      free_pin_slots_.pop_back();
      pin_counts_[slot] = 1;
      pin_slot_.Insert(id, slot);
      pinned_resident_ += slot_of_.Find(id) != IdSlotMap::kNoSlot;
    } else {
      ++stats_.pins_dropped;
    }
  }
}

void WindowedCache::Unpin(std::span<const uint64_t> ids) {
  // A pin that was dropped has nothing to release; a count that reaches zero frees its id.
  for (uint64_t id : ids) {
    uint32_t slot = pin_slot_.Find(id);
    if (slot == IdSlotMap::kNoSlot) continue;
    if (--pin_counts_[slot] == 0) {
      pin_slot_.Erase(id);
      free_pin_slots_.push_back(slot);
      pinned_resident_ -= slot_of_.Find(id) != IdSlotMap::kNoSlot;
    }
  }
}

}  // namespace strata
