#include "features/sieve_policy.h"

namespace strata {

SievePolicy::SievePolicy(size_t capacity)
    : table_("sieve", capacity),
      prev_(capacity, kNil),
      next_(capacity, kNil),
      visited_(capacity, 0) {}

void SievePolicy::Insert(uint64_t key) {
  uint32_t pos = table_.Add(key);
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
  if (table_.size() == 0) return std::nullopt;
  uint32_t pos = hand_ != kNil ? hand_ : tail_;
  const size_t max_steps = 2 * table_.size();
  for (size_t step = 0; step < max_steps; ++step) {
    if (visited_[pos]) {
      visited_[pos] = 0;
    } else if (!is_pinned(table_.key(pos))) {
      hand_ = prev_[pos];  // kNil when pos was the head: the next Evict starts at the tail
      Unlink(pos);
      return table_.Remove(pos);
    }
    pos = prev_[pos] != kNil ? prev_[pos] : tail_;
  }
  hand_ = pos;
  return std::nullopt;
}

size_t SievePolicy::bytes() const {
  return table_.bytes() + (prev_.capacity() + next_.capacity()) * sizeof(uint32_t) +
         visited_.capacity();
}

std::unique_ptr<CachePolicy> MakeSievePolicy(size_t capacity) {
  return std::make_unique<SievePolicy>(capacity);
}

}  // namespace strata
