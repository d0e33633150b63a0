// Helpers for the nn tests: random blocks with the awkward cases every kernel must handle,
// random matrices, and a central finite-difference gradient checker in double precision.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/random.h"
#include "nn/matrix.h"
#include "strata/block.h"

namespace strata::testing {

// A block with num_dst destinations among num_src sources and up to max_degree sampled
// sources per destination. Destination 1 has no edges; destination 0 lists a source twice
// and itself; others draw sources at random (repeats allowed).
inline Block RandomBlock(uint32_t num_dst, uint32_t num_src, uint32_t max_degree, uint64_t seed) {
  Rng rng(seed);
  Block block;
  block.dst_count = num_dst;
  for (uint32_t i = 0; i < num_src; ++i) block.src_nodes.push_back(1000 + i);
  block.indptr.push_back(0);
  for (uint32_t d = 0; d < num_dst; ++d) {
    if (d == 1) {
      block.indptr.push_back(static_cast<uint32_t>(block.indices.size()));
      continue;
    }
    if (d == 0 && num_src > 2) {
      uint32_t s = num_src - 1;
      block.indices.push_back(s);
      block.indices.push_back(0);
      block.indices.push_back(s);
    }
    uint32_t degree = 1 + static_cast<uint32_t>(rng.Below(max_degree));
    for (uint32_t k = 0; k < degree; ++k) {
      block.indices.push_back(static_cast<uint32_t>(rng.Below(num_src)));
    }
    block.indptr.push_back(static_cast<uint32_t>(block.indices.size()));
  }
  return block;
}

// Blocks for a model of `layers` layers: num_nodes[l] sources for block l, num_nodes[l + 1]
// destinations; the last entry is the number of seeds.
inline std::vector<Block> RandomBlocks(const std::vector<uint32_t>& num_nodes, uint32_t max_degree,
                                       uint64_t seed) {
  std::vector<Block> blocks;
  for (size_t l = 0; l + 1 < num_nodes.size(); ++l) {
    blocks.push_back(RandomBlock(num_nodes[l + 1], num_nodes[l], max_degree, MixSeed(seed, l)));
  }
  return blocks;
}

template <typename T>
BasicMatrix<T> RandomMatrix(size_t rows, size_t cols, uint64_t seed, double scale = 1.0) {
  BasicMatrix<T> m(rows, cols);
  Rng rng(seed);
  for (T& v : m.values()) v = static_cast<T>((2 * rng.Uniform() - 1) * scale);
  return m;
}

template <typename T>
bool BitIdentical(MatrixSpan<const T> a, MatrixSpan<const T> b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return false;
  for (size_t i = 0; i < a.rows(); ++i) {
    if (std::memcmp(a.row(i), b.row(i), a.cols() * sizeof(T)) != 0) return false;
  }
  return true;
}

// Largest elementwise |a - b| / max(|a|, |b|, floor).
template <typename A, typename B>
double MaxRelativeError(MatrixSpan<A> a, MatrixSpan<B> b, double floor = 1e-6) {
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.cols(), b.cols());
  double worst = 0;
  for (size_t i = 0; i < a.rows(); ++i) {
    for (size_t j = 0; j < a.cols(); ++j) {
      double x = a(i, j), y = b(i, j);
      double scale = std::max({std::abs(x), std::abs(y), floor});
      worst = std::max(worst, std::abs(x - y) / scale);
    }
  }
  return worst;
}

// Central differences of loss() with respect to every element of `values`, perturbing it in
// place by +-eps and restoring it.
inline MatrixD NumericGradient(MatrixSpan<double> values, const std::function<double()>& loss,
                               double eps = 1e-6) {
  MatrixD grad(values.rows(), values.cols());
  for (size_t i = 0; i < values.rows(); ++i) {
    for (size_t j = 0; j < values.cols(); ++j) {
      double saved = values(i, j);
      values(i, j) = saved + eps;
      double plus = loss();
      values(i, j) = saved - eps;
      double minus = loss();
      values(i, j) = saved;
      grad(i, j) = (plus - minus) / (2 * eps);
    }
  }
  return grad;
}

// Expects the analytic gradient to match central differences to a relative error < 1e-4.
inline void ExpectGradientMatches(const std::string& what, MatrixSpan<const double> analytic,
                                  MatrixSpan<double> values, const std::function<double()>& loss) {
  MatrixD numeric = NumericGradient(values, loss);
  double error = MaxRelativeError(analytic, numeric.span());
  EXPECT_LT(error, 1e-4) << what;
  // A gradient that is identically zero would pass trivially; make sure it is not.
  double largest = 0;
  for (size_t i = 0; i < numeric.rows(); ++i) {
    for (size_t j = 0; j < numeric.cols(); ++j)
      largest = std::max(largest, std::abs(numeric(i, j)));
  }
  EXPECT_GT(largest, 1e-3) << what << ": the gradient is (nearly) zero";
}

// sum(out .* weights), the scalar loss that layer gradient checks differentiate.
inline double WeightedSum(MatrixSpan<const double> out, MatrixSpan<const double> weights) {
  double sum = 0;
  for (size_t i = 0; i < out.rows(); ++i) {
    for (size_t j = 0; j < out.cols(); ++j) sum += out(i, j) * weights(i, j);
  }
  return sum;
}

}  // namespace strata::testing
