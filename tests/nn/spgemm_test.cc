// SpGEMM against a dense product, columns ascending, exact sizes, and the same bits whatever
// the thread count.
#include "nn/spgemm.h"

#include <gtest/gtest.h>

#include <random>

#include "strata/error.h"

namespace strata {
namespace {

CsrMatrix RandomCsr(uint64_t rows, uint64_t cols, uint32_t one_in, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> value(-1, 1);
  CsrMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.indptr.push_back(0);
  for (uint64_t i = 0; i < rows; ++i) {
    for (uint32_t j = 0; j < cols; ++j) {
      if (rng() % one_in == 0) {
        m.indices.push_back(j);
        m.values.push_back(value(rng));
      }
    }
    m.indptr.push_back(m.indices.size());
  }
  return m;
}

TEST(SpGemm, EqualsTheDenseProduct) {
  const CsrMatrix a = RandomCsr(300, 200, 20, 1), b = RandomCsr(200, 500, 30, 2);
  const CsrMatrix c = SpGemm(a.view(), b.view(), 1);
  ASSERT_EQ(c.indptr.size(), 301u);
  std::vector<double> dense(300 * 500, 0.0);
  std::vector<bool> structural(300 * 500, false);
  for (uint64_t i = 0; i < 300; ++i) {
    for (uint64_t e = a.indptr[i]; e < a.indptr[i + 1]; ++e) {
      for (uint64_t f = b.indptr[a.indices[e]]; f < b.indptr[a.indices[e] + 1]; ++f) {
        dense[i * 500 + b.indices[f]] += double{a.values[e]} * b.values[f];
        structural[i * 500 + b.indices[f]] = true;
      }
    }
  }
  uint64_t expected_nnz = 0;
  for (bool s : structural) expected_nnz += s;
  EXPECT_EQ(c.indices.size(), expected_nnz);
  for (uint64_t i = 0; i < 300; ++i) {
    for (uint64_t k = c.indptr[i]; k < c.indptr[i + 1]; ++k) {
      if (k > c.indptr[i]) {
        ASSERT_LT(c.indices[k - 1], c.indices[k]);
      }
      ASSERT_TRUE(structural[i * 500 + c.indices[k]]);
      ASSERT_NEAR(c.values[k], dense[i * 500 + c.indices[k]], 1e-5);
    }
  }
}

TEST(SpGemm, ThreadsChangeNoBit) {
  const CsrMatrix a = RandomCsr(500, 300, 15, 3), b = RandomCsr(300, 400, 25, 4);
  const CsrMatrix one = SpGemm(a.view(), b.view(), 1);
  for (unsigned threads : {2u, 3u, 7u}) {
    const CsrMatrix many = SpGemm(a.view(), b.view(), threads);
    EXPECT_EQ(many.indptr, one.indptr);
    EXPECT_EQ(many.indices, one.indices);
    EXPECT_EQ(many.values, one.values);
  }
  EXPECT_THROW(SpGemm(b.view(), b.view(), 1), Error);
}

}  // namespace
}  // namespace strata
