// Choosing and opening a feature store by name (--feature-store memory|mmap|direct).
#pragma once

#include <memory>
#include <string>

#include "features/direct_feature_store.h"
#include "strata/dataset.h"
#include "strata/feature_store.h"
#include "strata/memory_budget.h"

namespace strata {

enum class FeatureStoreKind { kMemory, kMmap, kDirect };

FeatureStoreKind ParseFeatureStoreKind(const std::string& name);  // memory | mmap | direct

// `direct` is used only by the direct store (I/O engine, read size, cache tiers).
std::unique_ptr<FeatureStore> OpenFeatureStore(const std::string& dataset_dir,
                                               const DatasetMeta& meta, FeatureStoreKind kind,
                                               const DirectStoreOptions& direct,
                                               MemoryBudget& budget);

}  // namespace strata
