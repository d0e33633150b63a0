// S3FifoPolicy is S3-FIFO (Yang et al., SOSP'23): three FIFO queues and a 2-bit access counter
// per key.
//   small  (target 10% of capacity) admits new keys. Most keys in a skewed workload are used
//          once; they leave from here without ever reaching main ("quick demotion").
//   main   (the rest) holds keys that proved themselves: a key at small's tail with freq > 1
//          moves to main's head (freq reset to 0, as libCacheSim's S3FIFO does); a key at
//          main's tail with freq > 0 is reinserted at the head with freq - 1, else evicted.
//   ghost  (as many keys as main's share) remembers keys recently evicted from small, keys only:
//          a ghost key that is admitted again goes straight to main, since it came back soon.
// Hits touch only the counter (freq = min(freq + 1, 3)); no queue moves on the hit path.
//
// The queues hold 32-bit positions in fixed ring buffers: S3-FIFO only pushes at heads and pops
// at tails, so no linked list is needed. Evict takes from small while small holds at least its
// target share (or main is empty), else from main; the shares are targets, the total capacity is
// the only hard bound.
//
// Pinned keys: a key at a tail that would move anyway (small, freq > 1 -> main; main, freq > 0
// -> reinserted with freq - 1) moves as usual, so its counter keeps decaying while pinned. A
// key that would be evicted but is pinned is set aside, and once Evict ends, whatever it
// returns, the set-aside keys go back to the head of their queue (moved to the head, as if
// reinserted). Setting them aside is the bound on skipping: each resident key is skipped at
// most once per Evict, a queue whose unexamined part is empty is done, and when both are done
// every resident key is pinned and Evict returns std::nullopt, with no queue changed except by
// the usual moves.
//
// Invariants: every position that table_ holds a key in is in exactly one of small_, main_ (or,
// inside Evict only, a set-aside list), and no other position is; ghost_map_ maps a key to the
// ring index in ghost_keys_ holding it, and no key is both resident and in ghost_map_.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "features/cache_policy.h"
#include "features/id_slot_map.h"
#include "features/position_table.h"

namespace strata {

class S3FifoPolicy final : public CachePolicy {
 public:
  explicit S3FifoPolicy(size_t capacity);

  void Touch(uint64_t key) override {
    uint32_t pos = table_.FindTouched(key);
    if (freq_[pos] < 3) ++freq_[pos];
  }

  void Insert(uint64_t key) override;
  std::optional<uint64_t> Evict(PinPredicate is_pinned) override;

  bool Contains(uint64_t key) const override { return table_.Contains(key); }
  size_t size() const override { return table_.size(); }
  size_t capacity() const override { return table_.capacity(); }
  size_t bytes() const override;
  std::string_view name() const override { return "s3fifo"; }

  // For tests and statistics.
  bool InGhost(uint64_t key) const { return ghost_map_.Contains(key); }
  size_t small_size() const { return small_.size(); }
  size_t main_size() const { return main_.size(); }
  size_t small_target() const { return small_target_; }

 private:
  // A FIFO of positions in a fixed ring; never allocates after construction.
  class PositionRing {
   public:
    explicit PositionRing(size_t capacity) : slots_(capacity) {}
    bool empty() const { return count_ == 0; }
    size_t size() const { return count_; }
    size_t bytes() const { return slots_.capacity() * sizeof(uint32_t); }
    void PushNewest(uint32_t pos) {
      size_t i = oldest_ + count_;
      if (i >= slots_.size()) i -= slots_.size();
      slots_[i] = pos;
      ++count_;
    }
    uint32_t PopOldest() {
      uint32_t pos = slots_[oldest_];
      if (++oldest_ == slots_.size()) oldest_ = 0;
      --count_;
      return pos;
    }

   private:
    std::vector<uint32_t> slots_;
    size_t oldest_ = 0;
    size_t count_ = 0;
  };

  void AddToGhost(uint64_t key);

  PositionTable table_;
  size_t small_target_;
  std::vector<uint8_t> freq_;  // position -> access count, 0..3
  PositionRing small_;
  PositionRing main_;
  // Pinned keys Evict set aside; empty between calls, reserved to capacity.
  std::vector<uint32_t> small_set_aside_;
  std::vector<uint32_t> main_set_aside_;

  // The ghost FIFO: a ring of keys, overwritten oldest first. A key re-admitted from the ghost
  // leaves its ring entry behind; when the ring reaches that entry it erases the key from
  // ghost_map_ only if the map still points there, since the key may have been added again.
  std::vector<uint64_t> ghost_keys_;
  size_t ghost_next_ = 0;    // ring index the next ghost key overwrites
  size_t ghost_filled_ = 0;  // ring entries ever written, up to ghost_keys_.size()
  IdSlotMap ghost_map_;      // key -> ring index
};

}  // namespace strata
