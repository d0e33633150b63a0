#include "features/open_feature_store.h"

#include "features/resident_feature_store.h"
#include "strata/error.h"

namespace strata {

FeatureStoreKind ParseFeatureStoreKind(const std::string& name) {
  if (name == "memory") return FeatureStoreKind::kMemory;
  if (name == "mmap") return FeatureStoreKind::kMmap;
  if (name == "direct") return FeatureStoreKind::kDirect;
  throw Error::Input("feature store '" + name + "' is not memory, mmap or direct");
}

std::unique_ptr<FeatureStore> OpenFeatureStore(const std::string& dataset_dir,
                                               const DatasetMeta& meta, FeatureStoreKind kind,
                                               const DirectStoreOptions& direct,
                                               MemoryBudget& budget) {
  const std::string path = dataset_dir + "/features.bin";
  const RowLayout layout = RowLayout::Of(meta);
  switch (kind) {
    case FeatureStoreKind::kMemory:
      return std::make_unique<MemoryFeatureStore>(path, layout, budget);
    case FeatureStoreKind::kMmap:
      return std::make_unique<MmapFeatureStore>(path, layout);
    case FeatureStoreKind::kDirect:
      break;
  }
  return std::make_unique<DirectFeatureStore>(path, layout, direct, budget);
}

}  // namespace strata
