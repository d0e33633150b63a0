// The order of a layer's products: no shape that multiplies first has more sources than
// MostSourcesMultipliedFirst allows for its destinations and gathered rows, which memory bounds
// rely on; and the bound is tight enough to matter (a sampled first layer never multiplies first).
#include "nn/product_order.h"

#include <gtest/gtest.h>

#include "common/random.h"

namespace strata {
namespace {

TEST(ProductOrder, NoShapeMultipliedFirstHasMoreSourcesThanTheBound) {
  Rng rng(7);
  for (int trial = 0; trial < 200000; ++trial) {
    const uint64_t dst = 1 + rng.Below(5000);
    const uint64_t gathered = rng.Below(50 * dst + 1);
    const uint64_t src = dst + rng.Below(gathered + 1);
    const size_t in = 1 + rng.Below(2048), out = 1 + rng.Below(512);
    if (MultiplyBeforeAggregating(gathered, src, dst, in, out)) {
      ASSERT_LE(src, MostSourcesMultipliedFirst(gathered, dst, in, out))
          << "dst " << dst << " gathered " << gathered << " in " << in << " out " << out;
    }
  }
  // Narrow inputs into wide outputs never multiply first; wide ones into narrow may, up to the
  // bound.
  EXPECT_EQ(MostSourcesMultipliedFirst(990000, 66000, 128, 256), 66001u);
  EXPECT_FALSE(MultiplyBeforeAggregating(990000, 66001, 66000, 128, 256));
  EXPECT_GT(MostSourcesMultipliedFirst(10000, 2708, 1433, 16), 10000u);
  EXPECT_TRUE(MultiplyBeforeAggregating(10000, 2708, 2708, 1433, 16));
}

}  // namespace
}  // namespace strata
