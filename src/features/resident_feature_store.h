// Feature stores whose rows are addressable in memory, so a gather is a loop of row copies
// done inside Submit: MemoryFeatureStore reads features.bin whole into memory charged to
// the budget; MmapFeatureStore maps it and lets the page cache fault rows in — the
// baseline that mmap-based loaders (PyG, DGL) give users today, kept to measure against.
#pragma once

#include <cstddef>
#include <string>

#include "features/row_codec.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"

namespace strata {

class ResidentFeatureStore : public FeatureStore {
 public:
  Ticket Submit(std::span<const uint64_t> ids, std::span<float> out) override;
  void Wait(Ticket) override {}
  uint64_t num_rows() const override { return layout_.num_rows; }
  uint64_t dim() const override { return layout_.dim; }
  FeatureStoreStats stats() const override { return stats_; }
  void ResetStats() override { stats_ = {}; }

 protected:
  explicit ResidentFeatureStore(const RowLayout& layout) : layout_(layout) {}
  const std::byte* base_ = nullptr;

 private:
  RowLayout layout_;
  FeatureStoreStats stats_;
};

class MemoryFeatureStore final : public ResidentFeatureStore {
 public:
  MemoryFeatureStore(const std::string& path, const RowLayout& layout, MemoryBudget& budget);
  std::string_view name() const override { return "memory"; }

 private:
  ChargedArray<std::byte> rows_;
};

class MmapFeatureStore final : public ResidentFeatureStore {
 public:
  MmapFeatureStore(const std::string& path, const RowLayout& layout);
  ~MmapFeatureStore() override;
  std::string_view name() const override { return "mmap"; }

 private:
  void* map_ = nullptr;
  size_t map_bytes_ = 0;
};

}  // namespace strata
