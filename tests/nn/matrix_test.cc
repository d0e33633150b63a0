#include "nn/matrix.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace strata {
namespace {

TEST(NnMatrix, StartsZeroedAndAligned) {
  Matrix m(3, 5);
  EXPECT_EQ(m.rows(), 3u);
  EXPECT_EQ(m.cols(), 5u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.data()) % 64, 0u);
  for (float v : m.values()) EXPECT_EQ(v, 0.0f);
}

TEST(NnMatrix, ResizeReusesCapacity) {
  Matrix m(100, 10);
  const float* before = m.data();
  m.Resize(10, 50);
  EXPECT_EQ(m.data(), before);
  m.Resize(101, 10);  // grows with slack
  EXPECT_GE(m.capacity(), 1250u);
  const float* grown = m.data();
  m.Resize(110, 10);
  EXPECT_EQ(m.data(), grown);
}

TEST(NnMatrix, SpanViewsRowsAndSubmatrices) {
  Matrix m(4, 6);
  for (size_t i = 0; i < 4; ++i) {
    for (size_t j = 0; j < 6; ++j) m(i, j) = static_cast<float>(10 * i + j);
  }
  MatrixSpan<const float> sub = m.span().Sub(1, 2, 2, 3);
  EXPECT_EQ(sub.rows(), 2u);
  EXPECT_EQ(sub.cols(), 3u);
  EXPECT_EQ(sub.stride(), 6u);
  EXPECT_EQ(sub(0, 0), 12.0f);
  EXPECT_EQ(sub(1, 2), 24.0f);
  EXPECT_FALSE(sub.contiguous());
  EXPECT_EQ(m.span().RowRange(3, 1)(0, 5), 35.0f);
  Matrix copy;
  copy.CopyFrom(sub);
  EXPECT_EQ(copy.rows(), 2u);
  EXPECT_EQ(copy(1, 0), 22.0f);
}

TEST(NnMatrix, CopyIsDeepAndMoveIsCheap) {
  Matrix a(2, 2);
  a(0, 1) = 7;
  Matrix b = a;
  b(0, 1) = 8;
  EXPECT_EQ(a(0, 1), 7.0f);
  const float* storage = b.data();
  Matrix c = std::move(b);
  EXPECT_EQ(c.data(), storage);
  EXPECT_EQ(c(0, 1), 8.0f);
}

}  // namespace
}  // namespace strata
