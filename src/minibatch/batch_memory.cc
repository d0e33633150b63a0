#include "minibatch/batch_memory.h"

#include <chrono>
#include <thread>

namespace strata {

MemoryBudget* BatchMemory::Charge(uint64_t index, uint64_t bytes, const std::atomic<bool>& stop) {
  // Room appears as the consumer drops batches, every few milliseconds at most.
  constexpr auto kPoll = std::chrono::milliseconds(1);
  while (!stop) {
    if (Reserved(index)) {
      reserve_.Charge(bytes, "a batch in flight");
      return &reserve_;
    }
    if (budget_.TryCharge(bytes)) return &budget_;
    std::this_thread::sleep_for(kPoll);
  }
  return nullptr;
}

}  // namespace strata
