#include "features/sieve_policy.h"

namespace strata {

SievePolicy::SievePolicy(size_t capacity)
    : capacity_((cache_policy_internal::CheckCapacity("sieve", capacity), capacity)),
      map_(capacity),
      keys_(capacity),
      prev_(capacity, kNil),
      next_(capacity, kNil),
      visited_(capacity, 0) {
  free_.reserve(capacity);
}

void SievePolicy::Insert(uint64_t key) {
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
  visited_[pos] = 0;
  prev_[pos] = kNil;
  next_[pos] = head_;
  if (head_ != kNil) prev_[head_] = pos;
  head_ = pos;
  if (tail_ == kNil) tail_ = pos;
}

void SievePolicy::Unlink(uint32_t pos) {
  uint32_t prev = prev_[pos];
  uint32_t next = next_[pos];
  if (prev != kNil) {
    next_[prev] = next;
  } else {
    head_ = next;
  }
  if (next != kNil) {
    prev_[next] = prev;
  } else {
    tail_ = prev;
  }
}

std::optional<uint64_t> SievePolicy::Evict(PinPredicate is_pinned) {
  if (map_.size() == 0) return std::nullopt;
  uint32_t pos = hand_ != kNil ? hand_ : tail_;
  const size_t max_steps = 2 * map_.size();
  for (size_t step = 0; step < max_steps; ++step) {
    if (visited_[pos]) {
      visited_[pos] = 0;
    } else if (uint64_t key = keys_[pos]; !is_pinned(key)) {
      hand_ = prev_[pos];  // kNil when pos was the head: the next Evict starts at the tail
      Unlink(pos);
      map_.Erase(key);
      free_.push_back(pos);
      return key;
    }
    pos = prev_[pos] != kNil ? prev_[pos] : tail_;
  }
  hand_ = pos;
  return std::nullopt;
}

size_t SievePolicy::bytes() const {
  return map_.bytes() + keys_.capacity() * sizeof(uint64_t) +
         (prev_.capacity() + next_.capacity() + free_.capacity()) * sizeof(uint32_t) +
         visited_.capacity();
}

std::unique_ptr<CachePolicy> MakeSievePolicy(size_t capacity) {
  return std::make_unique<SievePolicy>(capacity);
}

}  // namespace strata
