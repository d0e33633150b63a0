#include "features/clock_policy.h"

namespace strata {

ClockPolicy::ClockPolicy(size_t capacity) : table_("clock", capacity), state_(capacity, kFree) {}

void ClockPolicy::Insert(uint64_t key) { state_[table_.Add(key)] = kUnreferenced; }

std::optional<uint64_t> ClockPolicy::Evict(PinPredicate is_pinned) {
  if (table_.size() == 0) return std::nullopt;
  const uint32_t used = table_.used();
  const size_t max_steps = 2 * size_t{used};
  for (size_t step = 0; step < max_steps; ++step) {
    uint32_t pos = hand_;
    hand_ = hand_ + 1 == used ? 0 : hand_ + 1;
    uint8_t& state = state_[pos];
    if (state == kFree) continue;
    if (state == kReferenced) {
      state = kUnreferenced;
      continue;
    }
    if (is_pinned(table_.key(pos))) continue;
    state = kFree;
    return table_.Remove(pos);
  }
  return std::nullopt;
}

size_t ClockPolicy::bytes() const { return table_.bytes() + state_.capacity(); }

std::unique_ptr<CachePolicy> MakeClockPolicy(size_t capacity) {
  return std::make_unique<ClockPolicy>(capacity);
}

}  // namespace strata
