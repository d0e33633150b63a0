// BatchMemory says where a batch in flight takes its memory from (its blocks and input
// features), given the memory plan's batch reserve (minibatch/memory_plan.h): the three oldest
// batches not yet released — the one the consumer holds, the next and the one after — take it
// from the reserve, which holds three of the largest batches, and so never wait; later batches
// run ahead only in what the budget has free, waiting for it when it has none. Every batch
// becomes one of the reserve's before it is consumed, so a stream never stops for memory.
//
// Invariant: at most three batches hold reserve memory at once, provided the consumer drops
// batch k before it asks for batch k + 1 (the training loop does); HandedOut() counts them.
// Thread safety: every method may be called from any thread.
#pragma once

#include <atomic>
#include <cstdint>

#include "strata/memory_budget.h"

namespace strata {

class BatchMemory {
 public:
  // Batches are numbered from `first_index` (a stream resumed mid-epoch starts later).
  BatchMemory(MemoryBudget& budget, MemoryBudget& reserve, uint64_t first_index)
      : budget_(budget), reserve_(reserve), first_index_(first_index) {}

  // Whether batch `index` is one of the reserve's now.
  bool Reserved(uint64_t index) const {
    return index - first_index_ <= handed_out_.load(std::memory_order_acquire) + 1;
  }
  // Charges `bytes` for batch `index` and returns the budget charged: the reserve for one of
  // its batches, else the budget once it has room, waiting for it; null when `stop` is set
  // first.
  MemoryBudget* Charge(uint64_t index, uint64_t bytes, const std::atomic<bool>& stop);
  // The consumer has taken one more batch (and dropped the one before).
  void HandedOut() { handed_out_.fetch_add(1, std::memory_order_release); }

  MemoryBudget& budget() { return budget_; }
  MemoryBudget& reserve() { return reserve_; }

 private:
  MemoryBudget& budget_;
  MemoryBudget& reserve_;
  const uint64_t first_index_;
  std::atomic<uint64_t> handed_out_{0};
};

}  // namespace strata
