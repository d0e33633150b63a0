#include "features/s3fifo_policy.h"

#include <algorithm>

namespace strata {
namespace {

size_t SmallTarget(size_t capacity) { return std::max<size_t>(1, capacity / 10); }

// The ghost remembers as many keys as main's share of the cache, as in the paper.
size_t GhostCapacity(size_t capacity) {
  return std::max<size_t>(1, capacity - SmallTarget(capacity));
}

}  // namespace

S3FifoPolicy::S3FifoPolicy(size_t capacity)
    : table_("s3fifo", capacity),
      small_target_(SmallTarget(capacity)),
      freq_(capacity, 0),
      small_(capacity),
      main_(capacity),
      ghost_keys_(GhostCapacity(capacity)),
      ghost_map_(GhostCapacity(capacity)) {
  small_set_aside_.reserve(capacity);
  main_set_aside_.reserve(capacity);
}

void S3FifoPolicy::Insert(uint64_t key) {
  uint32_t pos = table_.Add(key);
  freq_[pos] = 0;
  if (ghost_map_.Erase(key)) {
    main_.PushNewest(pos);
  } else {
    small_.PushNewest(pos);
  }
}

std::optional<uint64_t> S3FifoPolicy::Evict(PinPredicate is_pinned) {
  std::optional<uint64_t> victim;
  while (!victim) {
    if (small_.empty() && main_.empty()) break;  // every resident key is set aside: all pinned
    // small's share counts its set-aside keys: they are still resident in small.
    size_t small_share = small_.size() + small_set_aside_.size();
    if (!small_.empty() && (small_share >= small_target_ || main_.empty())) {
      uint32_t pos = small_.PopOldest();
      if (freq_[pos] > 1) {
        freq_[pos] = 0;
        main_.PushNewest(pos);
      } else if (is_pinned(table_.key(pos))) {
        small_set_aside_.push_back(pos);
      } else {
        victim = table_.Remove(pos);
        AddToGhost(*victim);
      }
    } else {
      uint32_t pos = main_.PopOldest();
      if (freq_[pos] > 0) {
        --freq_[pos];
        main_.PushNewest(pos);
      } else if (is_pinned(table_.key(pos))) {
        main_set_aside_.push_back(pos);
      } else {
        victim = table_.Remove(pos);
      }
    }
  }
  for (uint32_t pos : small_set_aside_) small_.PushNewest(pos);
  for (uint32_t pos : main_set_aside_) main_.PushNewest(pos);
  small_set_aside_.clear();
  main_set_aside_.clear();
  return victim;
}

void S3FifoPolicy::AddToGhost(uint64_t key) {
  if (ghost_filled_ == ghost_keys_.size()) {
    uint64_t oldest = ghost_keys_[ghost_next_];
    if (ghost_map_.Find(oldest) == ghost_next_) ghost_map_.Erase(oldest);
  } else {
    ++ghost_filled_;
  }
  ghost_keys_[ghost_next_] = key;
  ghost_map_.Insert(key, static_cast<uint32_t>(ghost_next_));
  if (++ghost_next_ == ghost_keys_.size()) ghost_next_ = 0;
}

size_t S3FifoPolicy::bytes() const {
  return table_.bytes() + freq_.capacity() +
         (small_set_aside_.capacity() + main_set_aside_.capacity()) * sizeof(uint32_t) +
         small_.bytes() + main_.bytes() + ghost_keys_.capacity() * sizeof(uint64_t) +
         ghost_map_.bytes();
}

std::unique_ptr<CachePolicy> MakeS3FifoPolicy(size_t capacity) {
  return std::make_unique<S3FifoPolicy>(capacity);
}

}  // namespace strata
