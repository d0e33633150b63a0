// CheckMultistageOptions: reuse within 1..4 passes and one macro-batch fanout per layer (or
// none, for the sampling's), each refusal one line naming the option.
#include "multistage/multistage_options.h"

#include <gtest/gtest.h>

#include <string>

#include "strata/error.h"

namespace strata {
namespace {

std::string Refusal(const MultistageOptions& options, size_t layers) {
  try {
    CheckMultistageOptions(options, layers);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "accepted";
}

TEST(MultistageOptions, ReuseIsOneToFourPasses) {
  MultistageOptions o;
  for (uint32_t reuse : {1, 4}) {
    o.reuse = reuse;
    EXPECT_EQ(Refusal(o, 2), "accepted");
  }
  o.reuse = 0;
  EXPECT_EQ(Refusal(o, 2), "--reuse must be between 1 and 4, not 0");
  o.reuse = 5;
  EXPECT_EQ(Refusal(o, 2), "--reuse must be between 1 and 4, not 5");
}

TEST(MultistageOptions, MacroFanoutsListOnePerLayerOrNone) {
  MultistageOptions o;
  EXPECT_EQ(Refusal(o, 2), "accepted");
  o.fanouts = {10, 5};
  EXPECT_EQ(Refusal(o, 2), "accepted");
  o.fanouts = {10};
  EXPECT_EQ(Refusal(o, 2), "--macro-fanouts lists 1 layers, the model has 2");
}

TEST(MultistageOptions, RanksAreBelowTheWorldSizeWithFixedReuse) {
  MultistageOptions o;
  o.rank = 1;
  o.world_size = 2;
  EXPECT_EQ(Refusal(o, 2), "accepted");
  o.rank = 2;
  EXPECT_EQ(Refusal(o, 2), "rank 2 is not one of world_size 2");
  o.rank = 0;
  o.adaptive_reuse = true;
  EXPECT_NE(Refusal(o, 2).find("adaptive reuse (reuse auto) serves one rank"), std::string::npos);
}

}  // namespace
}  // namespace strata
