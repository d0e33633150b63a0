// SievePolicy is SIEVE (Zhang et al., NSDI'24): a FIFO queue, newest at the head, with a visited
// bit per key, and a hand that moves from the tail towards the head. Evict clears the bit of
// each visited key it passes and removes the first unvisited one in place; the hand then stays
// where it stopped, and wraps to the tail after passing the head. Unlike CLOCK, a key that
// survives is not moved, so new keys (at the head) and old survivors (behind the hand) stay
// apart and one-hit keys are evicted quickly: this is what makes SIEVE beat CLOCK on skewed
// workloads while a hit still only sets a bit.
//
// The queue is an intrusive doubly linked list over flat arrays of 32-bit positions, so removal
// from the middle is O(1) with no per-node allocation.
//
// Pinned keys: as in ClockPolicy, the hand clears a pinned key's visited bit in passing (the
// bit tracks recency, the pin is the owner's) and skips a pinned key instead of evicting it;
// the predicate is consulted only for an unvisited key. Evict gives up after 2 * size() steps
// (two laps: the first clears every bit), so std::nullopt means every resident key is pinned.
// The hand stays past the pinned keys, so the next Evict does not pass them again at once.
//
// Invariants: head_/tail_ are kNil iff the policy is empty; prev_ points towards the head,
// next_ towards the tail; hand_ is kNil or a resident position; every position that table_
// holds a key in is on the list exactly once, and no other position is.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "features/cache_policy.h"
#include "features/position_table.h"

namespace strata {

class SievePolicy final : public CachePolicy {
 public:
  explicit SievePolicy(size_t capacity);

  void Touch(uint64_t key) override {
    uint32_t pos = table_.FindTouched(key);
    if (!visited_[pos]) visited_[pos] = 1;  // keep hot lines clean: skip redundant stores
  }

  void Insert(uint64_t key) override;
  std::optional<uint64_t> Evict(PinPredicate is_pinned) override;

  bool Contains(uint64_t key) const override { return table_.Contains(key); }
  size_t size() const override { return table_.size(); }
  size_t capacity() const override { return table_.capacity(); }
  size_t bytes() const override;
  std::string_view name() const override { return "sieve"; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;

  void Unlink(uint32_t pos);

  PositionTable table_;
  std::vector<uint32_t> prev_;  // towards the head (newer); kNil at the head
  std::vector<uint32_t> next_;  // towards the tail (older); kNil at the tail
  std::vector<uint8_t> visited_;
  uint32_t head_ = kNil;
  uint32_t tail_ = kNil;
  uint32_t hand_ = kNil;  // next key Evict examines; kNil: start at the tail
};

}  // namespace strata
