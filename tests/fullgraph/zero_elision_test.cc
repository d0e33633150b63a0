// Zero elision: every chunk shape and density codes to the documented form and decodes bit for
// bit (only +0.0 elided: -0.0 and NaN kept), in place, with the vector and portable kernels
// giving the same bytes.
#include "fullgraph/zero_elision.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "common/random.h"
#include "strata/error.h"

namespace strata {
namespace {

// rows × width floats, a `share` of them nonzero, with a -0.0 and a NaN among them.
std::vector<float> Chunk(uint64_t rows, size_t width, double share, uint64_t seed) {
  Rng rng(seed);
  std::vector<float> values(rows * width);
  for (float& v : values) {
    v = rng.Uniform() < share ? static_cast<float>(rng.Uniform() - 0.5) : 0.0f;
  }
  if (values.size() > 2) {
    values[1] = -0.0f;
    values[values.size() - 2] = std::numeric_limits<float>::quiet_NaN();
  }
  return values;
}

std::vector<uint32_t> Bits(const float* values, size_t n) {
  std::vector<uint32_t> bits(n);
  std::memcpy(bits.data(), values, n * sizeof(float));
  return bits;
}

TEST(ZeroElision, ChunksDecodeBitForBitInPlace) {
  for (size_t width : {1, 5, 16, 17, 40, 64, 70}) {
    for (uint64_t rows : {1, 3, 1024}) {
      for (double share : {0.0, 0.25, 0.9, 1.0}) {
        const std::vector<float> original = Chunk(rows, width, share, width * 131 + rows);
        uint64_t expected_nonzeros = 0;
        for (float v : original) expected_nonzeros += std::bit_cast<uint32_t>(v) != 0;
        std::vector<std::vector<uint32_t>> coded;
        for (bool vector : {true, false}) {
          std::vector<float> chunk = original;
          std::vector<uint64_t> masks(MaskWords(rows, width));
          const uint64_t nonzeros = NonzeroMasks(chunk.data(), rows, width, masks.data(), vector);
          ASSERT_EQ(nonzeros, expected_nonzeros);
          if (ElidedBytes(nonzeros, rows, width) > chunk.size() * sizeof(float)) {
            EXPECT_THROW(ElideZeros(chunk.data(), rows, width, masks.data(), nonzeros, vector),
                         Error);
            continue;
          }
          ElideZeros(chunk.data(), rows, width, masks.data(), nonzeros, vector);
          // The stored values in order, then the bits from the next 8-byte boundary.
          uint64_t k = 0;
          for (uint64_t e = 0; e < rows * width; ++e) {
            if (std::bit_cast<uint32_t>(original[e]) == 0) continue;
            ASSERT_EQ(std::bit_cast<uint32_t>(chunk[k++]), std::bit_cast<uint32_t>(original[e]));
          }
          const auto* bits = reinterpret_cast<const uint64_t*>(
              reinterpret_cast<const std::byte*>(chunk.data()) + (nonzeros * 4 + 7) / 8 * 8);
          for (uint64_t e = 0; e < rows * width; ++e) {
            ASSERT_EQ((bits[e / 64] >> (e % 64)) & 1, std::bit_cast<uint32_t>(original[e]) != 0);
          }
          const uint64_t bytes = ElidedBytes(nonzeros, rows, width);
          coded.push_back(Bits(chunk.data(), bytes / sizeof(float)));
          // Row ranges expanded elsewhere, into rows wider than the chunk's: their columns
          // restored, the rest untouched.
          const size_t stride = width + 3;
          for (const auto& [begin, end] : {std::pair<uint64_t, uint64_t>{0, rows},
                                           {rows / 3, rows},
                                           {rows / 2, rows / 2 + 1}}) {
            std::vector<float> out((end - begin) * stride, 7.0f);
            ExpandRows(chunk.data(), rows, width, nonzeros, begin, end, out.data(), stride, vector);
            for (uint64_t r = begin; r < end; ++r) {
              for (size_t j = 0; j < stride; ++j) {
                const float want = j < width ? original[r * width + j] : 7.0f;
                ASSERT_EQ(std::bit_cast<uint32_t>(out[(r - begin) * stride + j]),
                          std::bit_cast<uint32_t>(want))
                    << "rows [" << begin << ", " << end << ") of " << rows << " × " << width;
              }
            }
          }
          EXPECT_THROW(ExpandRows(chunk.data(), rows, width, nonzeros, 0, rows + 1, nullptr, 1),
                       Error);
          std::vector<uint64_t> scratch(MaskWords(rows, width), ~uint64_t{0});
          RestoreZeros(chunk.data(), rows, width, scratch.data(), nonzeros, vector);
          ASSERT_EQ(Bits(chunk.data(), chunk.size()), Bits(original.data(), original.size()))
              << rows << " rows of " << width << ", share " << share;
        }
        if (!coded.empty()) {
          EXPECT_EQ(coded[0], coded[1]);
        }
      }
    }
  }
}

// Under 1 zero in 64 among the first 1,024 values (or all of a shorter chunk) is dense; -0.0 is
// not a zero, and values past the sample are not looked at.
TEST(ZeroElision, AChunkLooksDenseByItsFirstValues) {
  std::vector<float> values(4096, 1.0f);
  EXPECT_TRUE(LooksDense(values.data(), values.size()));
  for (size_t i = 0; i < 15; ++i) values[i * 64] = 0.0f;
  EXPECT_TRUE(LooksDense(values.data(), values.size()));
  values[15 * 64] = 0.0f;
  EXPECT_FALSE(LooksDense(values.data(), values.size()));
  values[15 * 64] = -0.0f;
  EXPECT_TRUE(LooksDense(values.data(), values.size()));
  std::fill(values.begin() + 1024, values.end(), 0.0f);
  EXPECT_TRUE(LooksDense(values.data(), values.size()));
  EXPECT_FALSE(LooksDense(values.data(), 63));  // 1 of 63
  EXPECT_TRUE(LooksDense(values.data() + 1, 63));
  EXPECT_FALSE(LooksDense(Chunk(64, 16, 0.25, 1).data(), 64 * 16));
}

TEST(ZeroElision, TheCodedFormIsTheNonzerosAndABitPerValue) {
  EXPECT_EQ(MaskWords(1024, 1), 16u);
  EXPECT_EQ(MaskWords(3, 17), 1u);
  EXPECT_EQ(MaskWords(4, 17), 2u);
  EXPECT_EQ(ElidedBytes(0, 1024, 64), 1024u * 64 / 8);
  EXPECT_EQ(ElidedBytes(3, 2, 16), 16u + 8);  // 12 bytes of values padded to 16, one word
}

}  // namespace
}  // namespace strata
