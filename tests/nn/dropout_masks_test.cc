#include "nn/dropout_masks.h"

#include <gtest/gtest.h>

#include <vector>

#include "common/random.h"

namespace strata {
namespace {

// Row `row`'s mask drawn alone, as the definition in the header states it.
std::vector<float> RowAlone(uint64_t seed, uint64_t row, size_t cols, uint32_t threshold,
                            float scale) {
  std::vector<float> mask(cols);
  Rng rng(MixSeed(seed, row));
  for (size_t j = 0; j < cols; j += 4) {
    uint64_t bits = rng.Next();
    for (size_t k = 0; k < 4 && j + k < cols; ++k, bits >>= 16) {
      mask[j + k] = (bits & 0xFFFF) >= threshold ? scale : 0.0f;
    }
  }
  return mask;
}

TEST(FillRowMasks, EveryRowIsItsOwnStreamWhateverTheBlock) {
  for (size_t cols : {1, 4, 7, 13, 256}) {
    for (size_t rows = 1; rows <= kMaskRows; ++rows) {
      std::vector<float> masks(rows * cols, -1.0f);
      FillRowMasks<float>(42, 1000, rows, cols, 19661, 1.25f, masks.data());  // p = 0.3
      for (size_t r = 0; r < rows; ++r) {
        const std::vector<float> want = RowAlone(42, 1000 + r, cols, 19661, 1.25f);
        const std::vector<float> got(masks.begin() + r * cols, masks.begin() + (r + 1) * cols);
        EXPECT_EQ(got, want) << rows << " rows of " << cols << ", row " << r;
      }
    }
  }
}

TEST(FillRowMasks, AColumnSliceGetsItsColumnsOfTheWholeRowsMasks) {
  for (size_t first : {0, 1, 3, 4, 6, 16, 17}) {
    for (size_t cols : {1, 2, 5, 16}) {
      std::vector<float> masks(3 * cols, -1.0f);
      FillRowMasks<float>(42, 1000, 3, cols, 19661, 1.25f, masks.data(), first);
      for (size_t r = 0; r < 3; ++r) {
        const std::vector<float> whole = RowAlone(42, 1000 + r, first + cols, 19661, 1.25f);
        const std::vector<float> want(whole.begin() + first, whole.end());
        const std::vector<float> got(masks.begin() + r * cols, masks.begin() + (r + 1) * cols);
        EXPECT_EQ(got, want) << cols << " columns from " << first << ", row " << r;
      }
    }
  }
}

TEST(FillRowMasks, GivenKeysEachRowDrawsItsKeysStream) {
  const std::vector<uint64_t> keys = {907, 3, 1u << 30, 3000000000ull, 5};
  std::vector<float> masks(keys.size() * 9, -1.0f);
  FillRowMasks<float>(42, RowKeys(keys), keys.size(), 9, 19661, 1.25f, masks.data());
  for (size_t r = 0; r < keys.size(); ++r) {
    const std::vector<float> got(masks.begin() + r * 9, masks.begin() + (r + 1) * 9);
    EXPECT_EQ(got, RowAlone(42, keys[r], 9, 19661, 1.25f)) << "row " << r;
  }
  // From(i): the rows from i on keep their keys, given or counted.
  EXPECT_EQ(RowKeys(keys).From(3)[1], 5u);
  EXPECT_EQ(RowKeys(100).From(3)[1], 104u);
}

TEST(FillRowMasks, KeepsTheShareAboveTheThreshold) {
  const size_t cols = 1000;
  std::vector<double> masks(kMaskRows * cols);
  FillRowMasks<double>(7, 0, kMaskRows, cols, 32768, 2.0, masks.data());  // p = 0.5
  size_t kept = 0;
  for (double m : masks) {
    ASSERT_TRUE(m == 0.0 || m == 2.0);
    kept += m != 0.0;
  }
  EXPECT_NEAR(static_cast<double>(kept) / masks.size(), 0.5, 0.02);
}

}  // namespace
}  // namespace strata
