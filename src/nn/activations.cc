#include "nn/activations.h"

#include "nn/parallel.h"
#include "nn/row_ops.h"

namespace strata {
namespace {

// One of the two terms is +0, so the sum is exactly v or s * v.
template <typename T>
inline T LeakyBy(T x, T v, T s) {
  bool positive = x > T{0};
  return KeepIf(positive, v) + s * KeepIf(!positive, v);
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

#define STRATA_INSTANTIATE_ACTIVATIONS(T)                                                     \
  template void Relu<T>(MatrixSpan<const T>, MatrixSpan<T>, unsigned);                        \
  template void ReluBackward<T>(MatrixSpan<const T>, MatrixSpan<const T>, MatrixSpan<T>,      \
                                unsigned);                                                    \
  template void LeakyRelu<T>(MatrixSpan<const T>, MatrixSpan<T>, double, unsigned);           \
  template void LeakyReluBackward<T>(MatrixSpan<const T>, MatrixSpan<const T>, MatrixSpan<T>, \
                                     double, unsigned);
STRATA_INSTANTIATE_ACTIVATIONS(float)
STRATA_INSTANTIATE_ACTIVATIONS(double)
#undef STRATA_INSTANTIATE_ACTIVATIONS

}  // namespace strata
