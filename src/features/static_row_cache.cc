#include "features/static_row_cache.h"

namespace strata {

StaticRowCache::StaticRowCache(std::vector<uint64_t> ids, uint64_t row_bytes, MemoryBudget& budget)
    : ids_(std::move(ids)),
      row_bytes_(row_bytes),
      budget_(budget),
      rows_(budget, ids_.size() * row_bytes, "the hot cache tier"),
      slot_of_(ids_.size()) {
  budget_.Charge(slot_of_.bytes() + ids_.size() * sizeof(uint64_t), "the hot cache tier's index");
  for (size_t i = 0; i < ids_.size(); ++i) slot_of_.Insert(ids_[i], static_cast<uint32_t>(i));
}

StaticRowCache::~StaticRowCache() {
  budget_.Release(slot_of_.bytes() + ids_.size() * sizeof(uint64_t));
}

}  // namespace strata
