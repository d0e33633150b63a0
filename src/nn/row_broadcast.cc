#include "nn/row_broadcast.h"

#include <algorithm>
#include <string>

#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {
namespace {

template <typename T>
STRATA_NN_CLONES void ColumnSumsRange(MatrixSpan<const T> in, T* out, size_t c0, size_t c1,
                                      bool accumulate) {
  if (!accumulate) ZeroRow(out + c0, c1 - c0);
  for (size_t i = 0; i < in.rows(); ++i) AddRow(out + c0, in.row(i) + c0, c1 - c0);
}

}  // namespace

template <typename T>
void BroadcastRows(std::span<const std::type_identity_t<T>> bias, MatrixSpan<T> out,
                   unsigned threads) {
  if (bias.size() != out.cols()) {
    throw Error::Internal("BroadcastRows: bias of " + std::to_string(bias.size()) + " values for " +
                          std::to_string(out.cols()) + " columns");
  }
  ForRows(threads, out.rows(), out.cols(), [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) CopyRow(out.row(i), bias.data(), out.cols());
  });
}

template <typename T>
void ColumnSums(MatrixSpan<const std::type_identity_t<T>> in, std::span<T> out, unsigned threads,
                bool accumulate) {
  if (out.size() != in.cols()) {
    throw Error::Internal("ColumnSums: " + std::to_string(out.size()) + " sums for " +
                          std::to_string(in.cols()) + " columns");
  }
  // Threads split the columns, so each sum still runs over all rows in order.
  const size_t blocks = (in.cols() + kRowBlock - 1) / kRowBlock;
  ForRows(threads, blocks, in.rows() * kRowBlock, [&](uint64_t begin, uint64_t end) {
    ColumnSumsRange<T>(in, out.data(), begin * kRowBlock, std::min(in.cols(), end * kRowBlock),
                       accumulate);
  });
}

#define STRATA_INSTANTIATE_ROW_BROADCAST(T)                                    \
  template void BroadcastRows<T>(std::span<const T>, MatrixSpan<T>, unsigned); \
  template void ColumnSums<T>(MatrixSpan<const T>, std::span<T>, unsigned, bool);
STRATA_INSTANTIATE_ROW_BROADCAST(float)
STRATA_INSTANTIATE_ROW_BROADCAST(double)
#undef STRATA_INSTANTIATE_ROW_BROADCAST

}  // namespace strata
