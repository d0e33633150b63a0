#include "features/clock_policy.h"

namespace strata {

ClockPolicy::ClockPolicy(size_t capacity)
    : capacity_((cache_policy_internal::CheckCapacity("clock", capacity), capacity)),
      map_(capacity),
      keys_(capacity),
      state_(capacity, kFree) {
  free_.reserve(capacity);
}

void ClockPolicy::Insert(uint64_t key) {
  if (map_.size() >= capacity_) [[unlikely]] {
    cache_policy_internal::ThrowFull(name(), capacity_);
  }
  uint32_t pos = free_.empty() ? used_ : free_.back();
  map_.Insert(key, pos);  // throws, changing nothing, if key is already resident
  if (free_.empty()) {
    ++used_;
  } else {
    free_.pop_back();
  }
  keys_[pos] = key;
  state_[pos] = kUnreferenced;
}

std::optional<uint64_t> ClockPolicy::Evict(PinPredicate is_pinned) {
  if (map_.size() == 0) return std::nullopt;
  const size_t max_steps = 2 * size_t{used_};
  for (size_t step = 0; step < max_steps; ++step) {
    uint32_t pos = hand_;
    hand_ = hand_ + 1 == used_ ? 0 : hand_ + 1;
    uint8_t& state = state_[pos];
    if (state == kFree) continue;
    if (state == kReferenced) {
      state = kUnreferenced;
      continue;
    }
    uint64_t key = keys_[pos];
    if (is_pinned(key)) continue;
    state = kFree;
    map_.Erase(key);
    free_.push_back(pos);
    return key;
  }
  return std::nullopt;
}

size_t ClockPolicy::bytes() const {
  return map_.bytes() + keys_.capacity() * sizeof(uint64_t) + state_.capacity() +
         free_.capacity() * sizeof(uint32_t);
}

std::unique_ptr<CachePolicy> MakeClockPolicy(size_t capacity) {
  return std::make_unique<ClockPolicy>(capacity);
}

}  // namespace strata
