// PositionTable gives each resident key of a cache policy a dense 32-bit position, so that the
// policy can keep its per-key state (reference bits, list links, counters) in flat arrays
// indexed by position instead of in a node per key. It owns the key -> position map, the
// position -> key array and the stack of freed positions; the policy owns what a position means.
//
// A freed position is handed out again before a new one, most recently freed first: CLOCK
// relies on this to place a new key just behind its hand (see clock_policy.h).
//
// Invariants: positions [0, used()) have been handed out, and each of them is either free (on
// the free stack) or holds key(pos) with Find(key(pos)) == pos; size() <= capacity(). Nothing
// allocates after construction.
//
// Misuse (Add of a resident key or into a full table, FindTouched of a key that is not resident)
// is a bug in the policy's owner and throws Error (internal), naming the policy, and changes
// nothing.
//
// Thread safety: none; the owning policy's owner serialises calls.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "features/id_slot_map.h"
#include "strata/error.h"

namespace strata {

class PositionTable {
 public:
  static constexpr uint32_t kNoPosition = IdSlotMap::kNoSlot;

  // `policy` names the policy in error messages and must outlive the table (a string literal).
  // Capacity must be in [1, 2^32 - 2]; otherwise throws Error (input) before allocating.
  PositionTable(const char* policy, size_t capacity)
      : policy_(policy), map_(CheckedCapacity(policy, capacity)), keys_(capacity) {
    free_.reserve(capacity);
  }

  // Gives key a position, the last one Remove freed if any, and returns it.
  uint32_t Add(uint64_t key) {
    if (map_.size() >= map_.max_entries()) [[unlikely]] {
      ThrowFull(policy_, map_.max_entries());
    }
    uint32_t pos = free_.empty() ? used_ : free_.back();
    map_.Insert(key, pos);  // throws, changing nothing, if key is already resident
    if (free_.empty()) {
      ++used_;
    } else {
      free_.pop_back();
    }
    keys_[pos] = key;
    return pos;
  }

  // Frees pos, which must hold a key, and returns that key.
  uint64_t Remove(uint32_t pos) {
    uint64_t key = keys_[pos];
    map_.Erase(key);
    free_.push_back(pos);
    return key;
  }

  // The position of key, or kNoPosition.
  uint32_t Find(uint64_t key) const { return map_.Find(key); }

  // The position of a key the owner just hit (CachePolicy::Touch); throws if it is not resident.
  uint32_t FindTouched(uint64_t key) const {
    uint32_t pos = map_.Find(key);
    if (pos == kNoPosition) [[unlikely]] {
      ThrowNotResident(policy_, key);
    }
    return pos;
  }

  bool Contains(uint64_t key) const { return map_.Contains(key); }
  uint64_t key(uint32_t pos) const { return keys_[pos]; }

  size_t size() const { return map_.size(); }
  size_t capacity() const { return map_.max_entries(); }
  // Positions [0, used()) have been handed out; a policy that scans its arrays stops here.
  uint32_t used() const { return used_; }
  // Memory of the map, the key array and the free stack, counted at capacity.
  size_t bytes() const {
    return map_.bytes() + keys_.capacity() * sizeof(uint64_t) + free_.capacity() * sizeof(uint32_t);
  }

 private:
  // Positions are uint32_t, and IdSlotMap reserves UINT32_MAX.
  static size_t CheckedCapacity(const char* policy, size_t capacity) {
    if (capacity == 0 || capacity >= UINT32_MAX) {
      throw Error::Input(std::string(policy) + " cache policy: capacity " +
                         std::to_string(capacity) + " is not in [1, " +
                         std::to_string(UINT32_MAX - 1) + "]");
    }
    return capacity;
  }

  // Out of line of the hot paths.
  [[noreturn, gnu::cold, gnu::noinline]] static void ThrowNotResident(const char* policy,
                                                                      uint64_t key) {
    throw Error::Internal(std::string(policy) + " policy: Touch of key " + std::to_string(key) +
                          ", which is not resident");
  }

  [[noreturn, gnu::cold, gnu::noinline]] static void ThrowFull(const char* policy,
                                                               size_t capacity) {
    throw Error::Internal(std::string(policy) + " policy: Insert into a full policy (capacity " +
                          std::to_string(capacity) + ")");
  }

  const char* policy_;
  IdSlotMap map_;               // key -> position
  std::vector<uint64_t> keys_;  // position -> key; valid where the position holds a key
  std::vector<uint32_t> free_;  // positions freed by Remove; reserved to capacity
  uint32_t used_ = 0;
};

}  // namespace strata
