#include "nn/activations.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "common/random.h"
#include "nn/dropout_masks.h"
#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {
namespace {

template <typename A, typename B>
void CheckSameShape(const char* kernel, const A& a, const B& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) {
    throw Error::Internal(std::string(kernel) + ": shapes " + std::to_string(a.rows()) + "x" +
                          std::to_string(a.cols()) + " and " + std::to_string(b.rows()) + "x" +
                          std::to_string(b.cols()) + " differ");
  }
}

void CheckProbability(const char* kernel, double p) {
  if (!(p >= 0 && p < 1)) {
    throw Error::Internal(std::string(kernel) + ": dropout probability " + std::to_string(p) +
                          " is outside [0, 1)");
  }
}

// The 16-bit threshold below which an element is dropped.
uint32_t DropThreshold(double p) { return static_cast<uint32_t>(std::lround(p * 65536.0)); }

// Elementwise operations, written for Map1 / Map2 (see row_ops.h). Zeros come out as +0.
template <typename T>
inline T ReluOf(T x) {
  return KeepIf(x > T{0}, x);
}
// g where the forward output y was > 0.
template <typename T>
inline T MaskBy(T y, T g) {
  return KeepIf(y > T{0}, g);
}
// One of the two terms is +0, so the sum is exactly v or s * v.
template <typename T>
inline T LeakyBy(T x, T v, T s) {
  bool positive = x > T{0};
  return KeepIf(positive, v) + s * KeepIf(!positive, v);
}
// x * m with m in {1/(1-p), 0}.
template <typename T>
inline T DropBy(T m, T x) {
  return KeepIf(m != T{0}, x * m);
}

template <typename T>
STRATA_NN_CLONES void ReluRange(MatrixSpan<const T> in, MatrixSpan<T> out, size_t begin,
                                size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (in.row(i) == out.row(i)) {
      Map1InPlace(out.row(i), in.cols(), ReluOf<T>);
    } else {
      Map1(in.row(i), out.row(i), in.cols(), ReluOf<T>);
    }
  }
}

template <typename T>
STRATA_NN_CLONES void ReluBackwardRange(MatrixSpan<const T> out, MatrixSpan<const T> grad_out,
                                        MatrixSpan<T> grad_in, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    if (grad_out.row(i) == grad_in.row(i)) {
      Map2InPlace(out.row(i), grad_in.row(i), out.cols(), MaskBy<T>);
    } else {
      Map2(out.row(i), grad_out.row(i), grad_in.row(i), out.cols(), MaskBy<T>);
    }
  }
}

template <typename T>
STRATA_NN_CLONES void LeakyReluRange(MatrixSpan<const T> in, MatrixSpan<T> out, T slope,
                                     size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) {
    auto leaky = [slope](T x) { return LeakyBy(x, x, slope); };
    if (in.row(i) == out.row(i)) {
      Map1InPlace(out.row(i), in.cols(), leaky);
    } else {
      Map1(in.row(i), out.row(i), in.cols(), leaky);
    }
  }
}

template <typename T>
STRATA_NN_CLONES void LeakyReluBackwardRange(MatrixSpan<const T> in, MatrixSpan<const T> grad_out,
                                             MatrixSpan<T> grad_in, T slope, size_t begin,
                                             size_t end) {
  for (size_t i = begin; i < end; ++i) {
    auto leaky = [slope](T x, T g) { return LeakyBy(x, g, slope); };
    if (grad_out.row(i) == grad_in.row(i)) {
      Map2InPlace(in.row(i), grad_in.row(i), in.cols(), leaky);
    } else {
      Map2(in.row(i), grad_out.row(i), grad_in.row(i), in.cols(), leaky);
    }
  }
}

template <typename T>
STRATA_NN_CLONES void DropoutRange(MatrixSpan<const T> in, MatrixSpan<T> out, uint64_t seed,
                                   uint64_t first_row, uint32_t threshold, T scale, bool relu_first,
                                   size_t begin, size_t end) {
  const size_t cols = in.cols();
  std::vector<T> masks(kMaskRows * cols);
  for (size_t first = begin; first < end; first += kMaskRows) {
    const size_t rows = std::min(kMaskRows, end - first);
    FillRowMasks(seed, first_row + first, rows, cols, threshold, scale, masks.data());
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

template <typename T>
STRATA_NN_CLONES void ColumnSumsRange(MatrixSpan<const T> in, T* out, size_t c0, size_t c1,
                                      bool accumulate) {
  if (!accumulate) ZeroRow(out + c0, c1 - c0);
  for (size_t i = 0; i < in.rows(); ++i) AddRow(out + c0, in.row(i) + c0, c1 - c0);
}

}  // namespace

template <typename T>
void Relu(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, unsigned threads) {
  CheckSameShape("Relu", in, out);
  ForRows(threads, in.rows(), in.cols(),
          [&](uint64_t begin, uint64_t end) { ReluRange<T>(in, out, begin, end); });
}

template <typename T>
void ReluBackward(MatrixSpan<const std::type_identity_t<T>> out,
                  MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                  unsigned threads) {
  CheckSameShape("ReluBackward", out, grad_out);
  CheckSameShape("ReluBackward", out, grad_in);
  ForRows(threads, out.rows(), out.cols(), [&](uint64_t begin, uint64_t end) {
    ReluBackwardRange<T>(out, grad_out, grad_in, begin, end);
  });
}

template <typename T>
void LeakyRelu(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, double slope,
               unsigned threads) {
  CheckSameShape("LeakyRelu", in, out);
  const T s = static_cast<T>(slope);
  ForRows(threads, in.rows(), in.cols(),
          [&](uint64_t begin, uint64_t end) { LeakyReluRange<T>(in, out, s, begin, end); });
}

template <typename T>
void LeakyReluBackward(MatrixSpan<const std::type_identity_t<T>> in,
                       MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                       double slope, unsigned threads) {
  CheckSameShape("LeakyReluBackward", in, grad_out);
  CheckSameShape("LeakyReluBackward", in, grad_in);
  const T s = static_cast<T>(slope);
  ForRows(threads, in.rows(), in.cols(), [&](uint64_t begin, uint64_t end) {
    LeakyReluBackwardRange<T>(in, grad_out, grad_in, s, begin, end);
  });
}

template <typename T>
void DropoutNonzeros(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads) {
  CheckProbability("DropoutNonzeros", p);
  if (p == 0) return;
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, x.rows(), x.cols(), [&](uint64_t begin, uint64_t end) {
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
  ForRows(threads, rows, values.size() / std::max<uint64_t>(rows, 1) + 1,
          [&](uint64_t begin, uint64_t end) {
            for (uint64_t i = begin; i < end; ++i) {
              DropRowNonzeros(values.data() + (indptr[i] - base), indptr[i + 1] - indptr[i], seed,
                              i, threshold, scale);
            }
          });
}

template <typename T>
void Dropout(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, double p,
             uint64_t seed, unsigned threads) {
  CheckSameShape("Dropout", in, out);
  CheckProbability("Dropout", p);
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
    DropoutRange<T>(in, out, seed, 0, threshold, scale, false, begin, end);
  });
}

template <typename T>
void DropoutBackward(MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                     double p, uint64_t seed, unsigned threads) {
  Dropout<T>(grad_out, grad_in, p, seed, threads);
}

template <typename T>
void ReluDropout(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads, uint64_t first_row) {
  CheckProbability("ReluDropout", p);
  if (p == 0) {
    Relu<T>(x, x, threads);
    return;
  }
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, x.rows(), x.cols() * 4, [&](uint64_t begin, uint64_t end) {
    DropoutRange<T>(x, x, seed, first_row, threshold, scale, true, begin, end);
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

namespace {

// Calls row(i, mask) for every row, mask holding the row's dropout mask ({1/(1-p), 0}, or all
// 1 when p == 0), split over threads.
template <typename T, typename RowFn>
void ForRowsWithMask(size_t rows, size_t cols, double p, uint64_t seed, uint64_t first_row,
                     unsigned threads, RowFn row) {
  const uint32_t threshold = DropThreshold(p);
  const T scale = static_cast<T>(1.0 / (1.0 - p));
  ForRows(threads, rows, cols * 8, [&](uint64_t begin, uint64_t end) {
    std::vector<T> masks(kMaskRows * cols, T{1});
    for (size_t first = begin; first < end; first += kMaskRows) {
      const size_t count = std::min<size_t>(kMaskRows, end - first);
      if (p > 0) FillRowMasks(seed, first_row + first, count, cols, threshold, scale, masks.data());
      for (size_t r = 0; r < count; ++r) row(first + r, masks.data() + r * cols);
    }
  });
}

}  // namespace

template <typename T>
void EluDropout(MatrixSpan<T> x, double p, uint64_t seed, unsigned threads, uint64_t first_row) {
  CheckProbability("EluDropout", p);
  ForRowsWithMask<T>(x.rows(), x.cols(), p, seed, first_row, threads, [&](size_t i, const T* mask) {
    T* row = x.row(i);
    for (size_t j = 0; j < x.cols(); ++j) {
      const T elu = row[j] > T{0} ? row[j] : std::expm1(row[j]);
      row[j] = mask[j] == T{0} ? T{0} : elu * mask[j];
    }
  });
}

template <typename T>
void EluDropoutBackward(MatrixSpan<const std::type_identity_t<T>> y, MatrixSpan<T> grad, double p,
                        uint64_t seed, unsigned threads, uint64_t first_row) {
  CheckSameShape("EluDropoutBackward", y, grad);
  CheckProbability("EluDropoutBackward", p);
  ForRowsWithMask<T>(y.rows(), y.cols(), p, seed, first_row, threads, [&](size_t i, const T* mask) {
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

#define STRATA_INSTANTIATE_ACTIVATIONS(T)                                                        \
  template void Relu<T>(MatrixSpan<const T>, MatrixSpan<T>, unsigned);                           \
  template void ReluBackward<T>(MatrixSpan<const T>, MatrixSpan<const T>, MatrixSpan<T>,         \
                                unsigned);                                                       \
  template void LeakyRelu<T>(MatrixSpan<const T>, MatrixSpan<T>, double, unsigned);              \
  template void LeakyReluBackward<T>(MatrixSpan<const T>, MatrixSpan<const T>, MatrixSpan<T>,    \
                                     double, unsigned);                                          \
  template void Dropout<T>(MatrixSpan<const T>, MatrixSpan<T>, double, uint64_t, unsigned);      \
  template void DropoutNonzeros<T>(MatrixSpan<T>, double, uint64_t, unsigned);                   \
  template void DropoutNonzerosCsr<T>(std::span<const uint64_t>, std::span<T>, double, uint64_t, \
                                      unsigned);                                                 \
  template void DropoutBackward<T>(MatrixSpan<const T>, MatrixSpan<T>, double, uint64_t,         \
                                   unsigned);                                                    \
  template void ReluDropout<T>(MatrixSpan<T>, double, uint64_t, unsigned, uint64_t);             \
  template void ReluDropoutBackward<T>(MatrixSpan<const T>, MatrixSpan<T>, double, unsigned);    \
  template void EluDropout<T>(MatrixSpan<T>, double, uint64_t, unsigned, uint64_t);              \
  template void EluDropoutBackward<T>(MatrixSpan<const T>, MatrixSpan<T>, double, uint64_t,      \
                                      unsigned, uint64_t);                                       \
  template void BroadcastRows<T>(std::span<const T>, MatrixSpan<T>, unsigned);                   \
  template void ColumnSums<T>(MatrixSpan<const T>, std::span<T>, unsigned, bool);
STRATA_INSTANTIATE_ACTIVATIONS(float)
STRATA_INSTANTIATE_ACTIVATIONS(double)
#undef STRATA_INSTANTIATE_ACTIVATIONS

}  // namespace strata
