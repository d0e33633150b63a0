#include "nn/dropout.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/random.h"
#include "nn/activations.h"
#include "nn/dropout_masks.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {
namespace {

void CheckProbability(const char* kernel, double p) {
  if (!(p >= 0 && p < 1)) {
    throw Error::Internal(std::string(kernel) + ": dropout probability " + std::to_string(p) +
                          " is outside [0, 1)");
  }
}

void CheckKeys(const char* kernel, RowKeys keys, size_t rows) {
  if (!keys.Covers(rows)) {
    throw Error::Internal(std::string(kernel) + ": fewer row keys than rows");
  }
}

// The 16-bit threshold below which an element is dropped.
uint32_t DropThreshold(double p) { return static_cast<uint32_t>(std::lround(p * 65536.0)); }

// x * m with m in {1/(1-p), 0}.
template <typename T>
inline T DropBy(T m, T x) {
  return KeepIf(m != T{0}, x * m);
}

template <typename T>
STRATA_NN_CLONES void DropoutRange(MatrixSpan<const T> in, MatrixSpan<T> out, uint64_t seed,
                                   RowKeys keys, uint32_t threshold, T scale, bool relu_first,
                                   size_t begin, size_t end, size_t first_column = 0) {
  const size_t cols = in.cols();
  std::vector<T> masks(kMaskRows * cols);
  for (size_t first = begin; first < end; first += kMaskRows) {
    const size_t rows = std::min(kMaskRows, end - first);
    FillRowMasks(seed, keys.From(first), rows, cols, threshold, scale, masks.data(), first_column);
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = first + r;
      const T* mask = masks.data() + r * cols;
      T* y = out.row(i);
      if (relu_first) {  // in == out
        Map2InPlace(mask, y, cols, [](T m, T x) { return DropBy(m, ReluOf(x)); });
      } else if (in.row(i) == y) {
        Map2InPlace(mask, y, cols, DropBy<T>);
      } else {
        Map2(mask, in.row(i), y, cols, DropBy<T>);
      }
    }
  }
}

// The work of an element of DropRowNonzeros in ForRows' units (about a multiply-add each): a
// branch on the value and a quarter of a draw. Weighed as one, a full-graph input group (128
// sparse rows of ~40 nonzeros, ~8 µs) ran on one thread while the other waited.
constexpr uint64_t kDrawWork = 16;

// Row `row`'s nonzeros among values[0, n), in order, each kept on 16 bits of the row's stream.
template <typename T>
void DropRowNonzeros(T* values, size_t n, uint64_t seed, uint64_t row, uint32_t threshold,
                     T scale) {
  Rng rng(MixSeed(seed, row));
  uint64_t bits = 0;
  int left = 0;  // 16-bit draws left in `bits`
  for (size_t j = 0; j < n; ++j) {
    if (values[j] == T{0}) continue;
    if (left == 0) {
      bits = rng.Next();
      left = 4;
    }
    values[j] = KeepIf(static_cast<uint32_t>(bits & 0xFFFF) >= threshold, values[j] * scale);
    bits >>= 16;
    --left;
  }
}

template <typename T>
STRATA_NN_CLONES void ReluDropoutBackwardRange(MatrixSpan<const T> y, MatrixSpan<T> grad, T scale,
                                               size_t begin, size_t end) {
  auto back = [scale](T out, T g) { return MaskBy(out, g * scale); };
  for (size_t i = begin; i < end; ++i) Map2InPlace(y.row(i), grad.row(i), y.cols(), back);
}

// Calls row(i, mask) for every row, mask holding the row's dropout mask ({1/(1-p), 0}, or all
// 1 when p == 0), split over threads.
template <typename T, typename RowFn>
void ForRowsWithMask(size_t rows, size_t cols, double p, uint64_t seed, RowKeys keys,
                     size_t first_column, unsigned threads, RowFn row) {
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, rows, cols * 8, [&](uint64_t begin, uint64_t end) {
    std::vector<T> masks(kMaskRows * cols, T{1});
    for (size_t first = begin; first < end; first += kMaskRows) {
      const size_t count = std::min<size_t>(kMaskRows, end - first);
      if (p > 0) {
        FillRowMasks(seed, keys.From(first), count, cols, threshold, scale, masks.data(),
                     first_column);
      }
      for (size_t r = 0; r < count; ++r) row(first + r, masks.data() + r * cols);
    }
  });
}

}  // namespace

template <typename T>
void DropoutNonzeros(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads) {
  CheckProbability("DropoutNonzeros", p);
  if (p == 0) return;
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, x.rows(), x.cols() * kDrawWork, [&](uint64_t begin, uint64_t end) {
    for (uint64_t i = begin; i < end; ++i) {
      DropRowNonzeros(x.row(i), x.cols(), seed, i, threshold, scale);
    }
  });
}

template <typename T>
void DropoutNonzerosCsr(std::span<const uint64_t> indptr, std::span<T> values, double p,
                        uint64_t seed, unsigned threads) {
  CheckProbability("DropoutNonzerosCsr", p);
  if (p == 0 || indptr.empty()) return;
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  const uint64_t rows = indptr.size() - 1;
  const uint64_t base = indptr[0];
  ForRows(threads, rows, (values.size() / std::max<uint64_t>(rows, 1) + 1) * kDrawWork,
          [&](uint64_t begin, uint64_t end) {
            for (uint64_t i = begin; i < end; ++i) {
              DropRowNonzeros(values.data() + (indptr[i] - base), indptr[i + 1] - indptr[i], seed,
                              i, threshold, scale);
            }
          });
}

template <typename T>
void Dropout(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, double p,
             uint64_t seed, unsigned threads, RowKeys keys) {
  CheckSameShape("Dropout", in, out);
  CheckProbability("Dropout", p);
  CheckKeys("Dropout", keys, in.rows());
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  if (p == 0) {
    ForRows(threads, in.rows(), in.cols(), [&](uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) {
        if (in.row(i) != out.row(i)) CopyRow(out.row(i), in.row(i), in.cols());
      }
    });
    return;
  }
  ForRows(threads, in.rows(), in.cols() * 4, [&](uint64_t begin, uint64_t end) {
    DropoutRange<T>(in, out, seed, keys, threshold, scale, false, begin, end);
  });
}

template <typename T>
void DropoutBackward(MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                     double p, uint64_t seed, unsigned threads) {
  Dropout<T>(grad_out, grad_in, p, seed, threads);
}

template <typename T>
void ReluDropout(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads, RowKeys keys,
                 size_t first_column) {
  CheckProbability("ReluDropout", p);
  CheckKeys("ReluDropout", keys, x.rows());
  if (p == 0) {
    Relu<T>(x, x, threads);
    return;
  }
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, x.rows(), x.cols() * 4, [&](uint64_t begin, uint64_t end) {
    DropoutRange<T>(x, x, seed, keys, threshold, scale, true, begin, end, first_column);
  });
}

template <typename T>
void ReluDropoutBackward(MatrixSpan<const std::type_identity_t<T>> y, MatrixSpan<T> grad, double p,
                         unsigned threads) {
  CheckSameShape("ReluDropoutBackward", y, grad);
  CheckProbability("ReluDropoutBackward", p);
  if (p == 0) {
    ReluBackward<T>(y, grad, grad, threads);
    return;
  }
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, y.rows(), y.cols(), [&](uint64_t begin, uint64_t end) {
    ReluDropoutBackwardRange<T>(y, grad, scale, begin, end);
  });
}

template <typename T>
void EluDropout(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads, RowKeys keys,
                size_t first_column) {
  CheckProbability("EluDropout", p);
  CheckKeys("EluDropout", keys, x.rows());
  ForRowsWithMask<T>(x.rows(), x.cols(), p, seed, keys, first_column, threads,
                     [&](size_t i, const T* mask) {
                       T* row = x.row(i);
                       for (size_t j = 0; j < x.cols(); ++j) {
                         const T elu = row[j] > T{0} ? row[j] : std::expm1(row[j]);
                         row[j] = mask[j] == T{0} ? T{0} : elu * mask[j];
                       }
                     });
}

template <typename T>
void EluDropoutBackward(MatrixSpan<const std::type_identity_t<T>> y, MatrixSpan<T> grad, double p,
                        uint64_t seed, unsigned threads, RowKeys keys) {
  CheckSameShape("EluDropoutBackward", y, grad);
  CheckProbability("EluDropoutBackward", p);
  CheckKeys("EluDropoutBackward", keys, y.rows());
  ForRowsWithMask<T>(y.rows(), y.cols(), p, seed, keys, 0, threads, [&](size_t i, const T* mask) {
    const T* out = y.row(i);
    T* g = grad.row(i);
    for (size_t j = 0; j < y.cols(); ++j) {
      if (mask[j] == T{0}) {
        g[j] = T{0};
        continue;
      }
      const T elu = out[j] / mask[j];  // a kept y is elu(x) / (1 - p)
      g[j] *= mask[j] * (elu > T{0} ? T{1} : elu + T{1});
    }
  });
}

#define STRATA_INSTANTIATE_DROPOUT(T)                                                            \
  template void Dropout<T>(MatrixSpan<const T>, MatrixSpan<T>, double, uint64_t, unsigned,       \
                           RowKeys);                                                             \
  template void DropoutNonzeros<T>(MatrixSpan<T>, double, uint64_t, unsigned);                   \
  template void DropoutNonzerosCsr<T>(std::span<const uint64_t>, std::span<T>, double, uint64_t, \
                                      unsigned);                                                 \
  template void DropoutBackward<T>(MatrixSpan<const T>, MatrixSpan<T>, double, uint64_t,         \
                                   unsigned);                                                    \
  template void ReluDropout<T>(MatrixSpan<T>, double, uint64_t, unsigned, RowKeys, size_t);      \
  template void ReluDropoutBackward<T>(MatrixSpan<const T>, MatrixSpan<T>, double, unsigned);    \
  template void EluDropout<T>(MatrixSpan<T>, double, uint64_t, unsigned, RowKeys, size_t);       \
  template void EluDropoutBackward<T>(MatrixSpan<const T>, MatrixSpan<T>, double, uint64_t,      \
                                      unsigned, RowKeys);
STRATA_INSTANTIATE_DROPOUT(float)
STRATA_INSTANTIATE_DROPOUT(double)
#undef STRATA_INSTANTIATE_DROPOUT

}  // namespace strata
