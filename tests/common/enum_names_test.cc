#include "common/enum_names.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/error.h"
#include "strata/feature_store.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "strata/model_options.h"
#include "strata/train.h"

namespace strata {
namespace {

enum class Colour { kRed, kGreen, kBlue };

constexpr EnumNames<Colour, 3> kColours(
    "colour", {{{Colour::kRed, "red"}, {Colour::kGreen, "green"}, {Colour::kBlue, "blue"}}});

TEST(EnumNames, ParseAndNameAreInverse) {
  for (Colour c : {Colour::kRed, Colour::kGreen, Colour::kBlue}) {
    EXPECT_EQ(kColours.Parse(kColours.Name(c)), c);
  }
  EXPECT_EQ(kColours.Name(Colour::kGreen), "green");
}

TEST(EnumNames, UnknownNameListsWhatIsAccepted) {
  try {
    kColours.Parse("Red");
    FAIL() << "parsed a name that is not in the table";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_EQ(std::string(e.what()), "unknown colour 'Red': expected red, green or blue");
  }
}

TEST(EnumNames, EveryOptionNameRoundTrips) {
  for (auto kind :
       {FeatureStoreKind::kMemory, FeatureStoreKind::kMmap, FeatureStoreKind::kDirect}) {
    EXPECT_EQ(ParseFeatureStoreKind(FeatureStoreKindName(kind)), kind);
  }
  for (auto kind : {CachePolicyKind::kClock, CachePolicyKind::kSieve, CachePolicyKind::kS3Fifo}) {
    EXPECT_EQ(ParseCachePolicyKind(CachePolicyKindName(kind)), kind);
  }
  for (auto policy :
       {HotnessPolicy::kPresample, HotnessPolicy::kReversePageRank, HotnessPolicy::kDegree}) {
    EXPECT_EQ(ParseHotnessPolicy(HotnessPolicyName(policy)), policy);
  }
  for (auto placement :
       {TopologyPlacement::kAuto, TopologyPlacement::kMemory, TopologyPlacement::kDisk}) {
    EXPECT_EQ(ParseTopologyPlacement(TopologyPlacementName(placement)), placement);
  }
  for (auto kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    EXPECT_EQ(ParseModelKind(ModelKindName(kind)), kind);
  }
  for (auto kind : {OptimizerKind::kAdam, OptimizerKind::kSgd}) {
    EXPECT_EQ(ParseOptimizerKind(OptimizerKindName(kind)), kind);
  }
  for (auto method :
       {MultistageMethod::kPartition, MultistageMethod::kLargeBatch, MultistageMethod::kPbs}) {
    EXPECT_EQ(ParseMultistageMethod(MultistageMethodName(method)), method);
  }
  for (auto model : {GraphModel::kSbm, GraphModel::kRmat}) {
    EXPECT_EQ(ParseGraphModel(GraphModelName(model)), model);
  }
  EXPECT_EQ(HotnessPolicyName(HotnessPolicy::kReversePageRank), "rpr");
}

}  // namespace
}  // namespace strata
