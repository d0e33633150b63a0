// Choosing a feature store and its cache by name (--feature-store, --cache-policy,
// --hot-policy) and opening it.
#include "strata/feature_store.h"

#include "common/enum_names.h"
#include "features/direct_feature_store.h"
#include "features/resident_feature_store.h"
#include "strata/error.h"

namespace strata {

namespace {

constexpr EnumNames<FeatureStoreKind, 3> kStoreNames("feature store",
                                                     {{{FeatureStoreKind::kMemory, "memory"},
                                                       {FeatureStoreKind::kMmap, "mmap"},
                                                       {FeatureStoreKind::kDirect, "direct"}}});
constexpr EnumNames<CachePolicyKind, 3> kCachePolicyNames("cache policy",
                                                          {{{CachePolicyKind::kClock, "clock"},
                                                            {CachePolicyKind::kSieve, "sieve"},
                                                            {CachePolicyKind::kS3Fifo, "s3fifo"}}});
constexpr EnumNames<HotnessPolicy, 3> kHotnessNames("hot-tier policy",
                                                    {{{HotnessPolicy::kPresample, "presample"},
                                                      {HotnessPolicy::kReversePageRank, "rpr"},
                                                      {HotnessPolicy::kDegree, "degree"}}});

}  // namespace

FeatureStoreKind ParseFeatureStoreKind(std::string_view name) { return kStoreNames.Parse(name); }
std::string_view FeatureStoreKindName(FeatureStoreKind kind) { return kStoreNames.Name(kind); }

CachePolicyKind ParseCachePolicyKind(std::string_view name) {
  return kCachePolicyNames.Parse(name);
}
std::string_view CachePolicyKindName(CachePolicyKind kind) { return kCachePolicyNames.Name(kind); }

HotnessPolicy ParseHotnessPolicy(std::string_view name) { return kHotnessNames.Parse(name); }
std::string_view HotnessPolicyName(HotnessPolicy policy) { return kHotnessNames.Name(policy); }

std::unique_ptr<FeatureStore> OpenFeatureStore(const Dataset& dataset, FeatureStoreKind kind,
                                               const DirectStoreOptions& direct,
                                               MemoryBudget& budget) {
  if (dataset.meta().sparse_features) {
    throw Error::Input(
        "has sparse (CSR) features, which mini-batch training and the feature stores do not "
        "read; train it with --full-graph --model gcn",
        dataset.dir());
  }
  const std::string path = dataset.PathOf(kFeaturesFile);
  const RowLayout layout = RowLayout::Of(dataset.meta());
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
