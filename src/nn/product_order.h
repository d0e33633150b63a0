// Which of a graph layer's two products runs first: aggregating rows over a block's edges, or
// multiplying them by the layer's in_dim x out_dim weight. Both give the same result; their
// costs differ by the width of the rows the aggregation gathers (in_dim before the product,
// out_dim after) and by the rows the product covers (the destinations after aggregating, every
// source before). Wide inputs into few outputs, as a full neighbourhood of 767 or 1433 raw
// features into 16 hidden units, gather 50-90x fewer values multiplied first (Kipf's code and
// DGL's GraphConv and SAGEConv do the same); a sampled first layer, whose sources outnumber its
// destinations ten to one, is cheaper aggregated first.
//
// The answer depends only on the shapes, so a batch always takes the same order.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

namespace strata {

// A multiply-add of the aggregation (a row gathered at random) against one of a GEMM, which
// streams through cache-blocked panels at 10-40x the rate.
inline constexpr double kGatheredCost = 16;

// `gathered`: the rows the aggregation reads, one per edge (and self loop).
inline bool MultiplyBeforeAggregating(uint64_t gathered, uint64_t num_src, uint64_t num_dst,
                                      size_t in_dim, size_t out_dim) {
  const double in = static_cast<double>(in_dim), out = static_cast<double>(out_dim);
  const double rows = static_cast<double>(gathered);
  const double aggregate_first =
      kGatheredCost * rows * in + static_cast<double>(num_dst) * in * out;
  const double multiply_first =
      static_cast<double>(num_src) * in * out + kGatheredCost * rows * out;
  return multiply_first < aggregate_first;
}

// The most sources a layer of at most `num_dst` destinations gathering at most `gathered` rows
// can have and still multiply first (from the inequality above, with one row to spare for the
// rounding): a sampled first layer's many sources always aggregate first, so memory bounds
// need not size the multiplied-first rows for them.
inline uint64_t MostSourcesMultipliedFirst(uint64_t gathered, uint64_t num_dst, size_t in_dim,
                                           size_t out_dim) {
  if (in_dim <= out_dim) return num_dst + 1;
  const double in = static_cast<double>(in_dim), out = static_cast<double>(out_dim);
  const double wider = kGatheredCost * static_cast<double>(gathered) * (in - out) / (in * out);
  return num_dst + static_cast<uint64_t>(std::ceil(wider)) + 1;
}

}  // namespace strata
