// ClockPolicy is CLOCK (second chance): resident keys sit in a circular array with one reference
// bit each, and a hand sweeps the array, clearing set bits and evicting the first key whose bit
// is already clear. It approximates LRU with one bit per key and no list moves on a hit, which
// is why it is the baseline policy.
//
// A new key starts with its bit clear: its admission was a miss, not a reuse, so it has to be
// touched again to earn a second chance. It is placed in the position the last Evict freed,
// which lies just behind the hand, so it is the last key the hand reaches.
//
// Pinned keys: the hand treats a pinned key like any other (it clears a set bit in passing) but
// never evicts it. The pin is consulted only for a key the hand would otherwise evict, so the
// predicate runs once per candidate, not once per step; and the bit keeps recording recency
// while a key is pinned, so once the window releases it the key competes on its real history.
// Evict gives up after two full sweeps: the first clears every bit, so an unpinned key, if any,
// is found by the end of the second; hence std::nullopt means every resident key is pinned.
//
// Invariants: the hand sweeps the positions table_ has handed out, [0, table_.used()); a
// position's state is kFree exactly when table_ holds no key there.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "features/cache_policy.h"
#include "features/position_table.h"

namespace strata {

class ClockPolicy final : public CachePolicy {
 public:
  explicit ClockPolicy(size_t capacity);

  void Touch(uint64_t key) override {
    uint32_t pos = table_.FindTouched(key);
    // Skip the store when the bit is already set: hot keys are touched far more often than the
    // hand passes them, and a clean cache line is cheaper to keep.
    if (state_[pos] != kReferenced) state_[pos] = kReferenced;
  }

  void Insert(uint64_t key) override;
  std::optional<uint64_t> Evict(PinPredicate is_pinned) override;

  bool Contains(uint64_t key) const override { return table_.Contains(key); }
  size_t size() const override { return table_.size(); }
  size_t capacity() const override { return table_.capacity(); }
  size_t bytes() const override;
  std::string_view name() const override { return "clock"; }

 private:
  enum State : uint8_t { kFree, kUnreferenced, kReferenced };

  PositionTable table_;
  std::vector<uint8_t> state_;  // position -> State
  uint32_t hand_ = 0;           // wraps at table_.used()
};

}  // namespace strata
