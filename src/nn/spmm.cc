#include "nn/spmm.h"

#include <string>
#include <vector>

#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {
namespace {

// How many edges ahead the forward kernels prefetch neighbour rows.
constexpr uint32_t kPrefetchEdges = 4;

void CheckShape(const char* kernel, const char* what, size_t rows, size_t want_rows, size_t cols,
                size_t want_cols) {
  if (rows != want_rows || cols != want_cols) {
    throw Error::Internal(std::string(kernel) + ": " + what + " is " + std::to_string(rows) + "x" +
                          std::to_string(cols) + ", expected " + std::to_string(want_rows) + "x" +
                          std::to_string(want_cols));
  }
}

// `weights` null: every edge counts once; else edge e counts weights[e] times, and the mean
// divides by the destination's total weight.
template <typename T>
STRATA_NN_CLONES void SpmmRange(const uint32_t* indptr, const uint32_t* indices,
                                const float* weights, MatrixSpan<const T> in, MatrixSpan<T> out,
                                bool mean, uint32_t begin, uint32_t end) {
  const size_t f = in.cols();
  const uint32_t last_edge = indptr[end];
  for (uint32_t d = begin; d < end; ++d) {
    T* o = out.row(d);
    const uint32_t e0 = indptr[d];
    const uint32_t e1 = indptr[d + 1];
    if (e0 == e1) {
      ZeroRow(o, f);
      continue;
    }
    T total{0};
    for (uint32_t e = e0; e < e1; ++e) {
      if (e + kPrefetchEdges < last_edge) PrefetchRow(in.row(indices[e + kPrefetchEdges]), f);
      const T* x = in.row(indices[e]);
      if (weights != nullptr) {
        if (e == e0) ZeroRow(o, f);
        AxpyRow(o, static_cast<T>(weights[e]), x, f);
        total += static_cast<T>(weights[e]);
      } else if (e == e0) {
        CopyRow(o, x, f);
      } else {
        AddRow(o, x, f);
      }
    }
    if (weights == nullptr) total = static_cast<T>(e1 - e0);
    if (mean) ScaleRow(o, T{1} / total, f);
  }
}

// `inverse_totals`: with mean, 1 / each destination's edge count or total weight.
template <typename T>
STRATA_NN_CLONES void SpmmTransposedRange(const BlockCsc& csc, const T* inverse_totals,
                                          MatrixSpan<const T> grad_out, MatrixSpan<T> grad_in,
                                          bool accumulate, uint32_t begin, uint32_t end) {
  const size_t f = grad_out.cols();
  const float* weights = csc.weights.empty() ? nullptr : csc.weights.data();
  for (uint32_t s = begin; s < end; ++s) {
    T* g = grad_in.row(s);
    if (!accumulate) ZeroRow(g, f);
    for (uint32_t j = csc.indptr[s]; j < csc.indptr[s + 1]; ++j) {
      const uint32_t d = csc.dst[j];
      T scale = inverse_totals != nullptr ? inverse_totals[d] : T{1};
      if (weights != nullptr) scale *= static_cast<T>(weights[csc.edge[j]]);
      if (inverse_totals == nullptr && weights == nullptr) {
        AddRow(g, grad_out.row(d), f);
      } else {
        AxpyRow(g, scale, grad_out.row(d), f);
      }
    }
  }
}

template <typename T>
STRATA_NN_CLONES void SpmmWeightedRange(const uint32_t* indptr, const uint32_t* indices,
                                        MatrixSpan<const T> weights, MatrixSpan<const T> in,
                                        MatrixSpan<T> out, uint32_t begin, uint32_t end) {
  const size_t heads = weights.cols();
  const size_t f = in.cols() / heads;
  for (uint32_t d = begin; d < end; ++d) {
    T* o = out.row(d);
    ZeroRow(o, in.cols());
    for (uint32_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      const T* x = in.row(indices[e]);
      const T* w = weights.row(e);
      for (size_t h = 0; h < heads; ++h) AxpyRow(o + h * f, w[h], x + h * f, f);
    }
  }
}

template <typename T>
STRATA_NN_CLONES void SpmmWeightedTransposedRange(const BlockCsc& csc, MatrixSpan<const T> weights,
                                                  MatrixSpan<const T> grad_out,
                                                  MatrixSpan<T> grad_in, bool accumulate,
                                                  uint32_t begin, uint32_t end) {
  const size_t heads = weights.cols();
  const size_t f = grad_out.cols() / heads;
  for (uint32_t s = begin; s < end; ++s) {
    T* g = grad_in.row(s);
    if (!accumulate) ZeroRow(g, grad_out.cols());
    for (uint32_t j = csc.indptr[s]; j < csc.indptr[s + 1]; ++j) {
      const T* y = grad_out.row(csc.dst[j]);
      const T* w = weights.row(csc.edge[j]);
      for (size_t h = 0; h < heads; ++h) AxpyRow(g + h * f, w[h], y + h * f, f);
    }
  }
}

template <typename T>
STRATA_NN_CLONES void SpmmGcnRange(const uint32_t* indptr, const uint32_t* indices,
                                   const float* weights, const T* norm, MatrixSpan<const T> in,
                                   MatrixSpan<T> out, uint32_t begin, uint32_t end) {
  const size_t f = in.cols();
  const uint32_t last_edge = indptr[end];
  for (uint32_t d = begin; d < end; ++d) {
    T* o = out.row(d);
    ScaledCopyRow(o, norm[d], in.row(d), f);
    for (uint32_t e = indptr[d]; e < indptr[d + 1]; ++e) {
      if (e + kPrefetchEdges < last_edge) PrefetchRow(in.row(indices[e + kPrefetchEdges]), f);
      const uint32_t s = indices[e];
      AxpyRow(o, weights == nullptr ? norm[s] : norm[s] * static_cast<T>(weights[e]), in.row(s), f);
    }
    ScaleRow(o, norm[d], f);
  }
}

template <typename T>
STRATA_NN_CLONES void SpmmGcnTransposedRange(const BlockCsc& csc, const T* norm,
                                             MatrixSpan<const T> grad_out, MatrixSpan<T> grad_in,
                                             bool accumulate, uint32_t begin, uint32_t end) {
  const size_t f = grad_out.cols();
  const float* weights = csc.weights.empty() ? nullptr : csc.weights.data();
  std::vector<T> sum(accumulate ? f : 0);
  for (uint32_t s = begin; s < end; ++s) {
    T* acc = accumulate ? sum.data() : grad_in.row(s);
    if (s < csc.num_dst) {
      ScaledCopyRow(acc, norm[s], grad_out.row(s), f);
    } else {
      ZeroRow(acc, f);
    }
    for (uint32_t j = csc.indptr[s]; j < csc.indptr[s + 1]; ++j) {
      const uint32_t d = csc.dst[j];
      AxpyRow(acc, weights == nullptr ? norm[d] : norm[d] * static_cast<T>(weights[csc.edge[j]]),
              grad_out.row(d), f);
    }
    if (accumulate) {
      AxpyRow(grad_in.row(s), norm[s], acc, f);
    } else {
      ScaleRow(acc, norm[s], f);
    }
  }
}

}  // namespace

template <typename T>
void Spmm(const BlockCsr& csr, Reduce reduce, MatrixSpan<const std::type_identity_t<T>> in,
          MatrixSpan<T> out, unsigned threads) {
  CheckShape("Spmm", "input", in.rows(), csr.num_src, in.cols(), in.cols());
  CheckShape("Spmm", "output", out.rows(), csr.num_dst, out.cols(), in.cols());
  const float* weights = csr.weights.empty() ? nullptr : csr.weights.data();
  ForSegments(threads, csr.indptr, in.cols(), [&](uint32_t begin, uint32_t end) {
    SpmmRange<T>(csr.indptr.data(), csr.indices.data(), weights, in, out, reduce == Reduce::kMean,
                 begin, end);
  });
}

template <typename T>
void SpmmTransposed(const BlockCsr& csr, const BlockCsc& csc, Reduce reduce,
                    MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                    bool accumulate, unsigned threads) {
  CheckShape("SpmmTransposed", "gradient of the output", grad_out.rows(), csr.num_dst,
             grad_out.cols(), grad_out.cols());
  CheckShape("SpmmTransposed", "gradient of the input", grad_in.rows(), csr.num_src, grad_in.cols(),
             grad_out.cols());
  if (csc.num_src != csr.num_src || csc.dst.size() != csr.num_edges() ||
      csc.weights.size() != csr.weights.size()) {
    throw Error::Internal("SpmmTransposed: the CSC was not built from this CSR");
  }
  // The mean's divisor per destination: its edge count, or with weights its total weight.
  std::vector<T> inverse_totals;
  if (reduce == Reduce::kMean) {
    inverse_totals.resize(csr.num_dst);
    for (uint32_t d = 0; d < csr.num_dst; ++d) {
      T total = static_cast<T>(csr.indptr[d + 1] - csr.indptr[d]);
      if (!csr.weights.empty()) {
        total = T{0};
        for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
          total += static_cast<T>(csr.weights[e]);
        }
      }
      inverse_totals[d] = total > 0 ? T{1} / total : T{0};
    }
  }
  ForSegments(threads, csc.indptr, grad_out.cols(), [&](uint32_t begin, uint32_t end) {
    SpmmTransposedRange<T>(csc, inverse_totals.empty() ? nullptr : inverse_totals.data(), grad_out,
                           grad_in, accumulate, begin, end);
  });
}

template <typename T>
void SpmmWeighted(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> weights,
                  MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out,
                  unsigned threads) {
  const size_t heads = weights.cols();
  if (heads == 0 || in.cols() % heads != 0) {
    throw Error::Internal("SpmmWeighted: " + std::to_string(in.cols()) +
                          " columns do not split into " + std::to_string(heads) + " heads");
  }
  CheckShape("SpmmWeighted", "weights", weights.rows(), csr.num_edges(), heads, heads);
  CheckShape("SpmmWeighted", "input", in.rows(), csr.num_src, in.cols(), in.cols());
  CheckShape("SpmmWeighted", "output", out.rows(), csr.num_dst, out.cols(), in.cols());
  ForSegments(threads, csr.indptr, in.cols(), [&](uint32_t begin, uint32_t end) {
    SpmmWeightedRange<T>(csr.indptr.data(), csr.indices.data(), weights, in, out, begin, end);
  });
}

template <typename T>
void SpmmWeightedTransposed(const BlockCsc& csc, MatrixSpan<const std::type_identity_t<T>> weights,
                            MatrixSpan<const std::type_identity_t<T>> grad_out,
                            MatrixSpan<T> grad_in, bool accumulate, unsigned threads) {
  const size_t heads = weights.cols();
  if (heads == 0 || grad_out.cols() % heads != 0) {
    throw Error::Internal("SpmmWeightedTransposed: " + std::to_string(grad_out.cols()) +
                          " columns do not split into " + std::to_string(heads) + " heads");
  }
  CheckShape("SpmmWeightedTransposed", "weights", weights.rows(), csc.dst.size(), heads, heads);
  CheckShape("SpmmWeightedTransposed", "gradient of the output", grad_out.rows(), csc.num_dst,
             grad_out.cols(), grad_out.cols());
  CheckShape("SpmmWeightedTransposed", "gradient of the input", grad_in.rows(), csc.num_src,
             grad_in.cols(), grad_out.cols());
  ForSegments(threads, csc.indptr, grad_out.cols(), [&](uint32_t begin, uint32_t end) {
    SpmmWeightedTransposedRange<T>(csc, weights, grad_out, grad_in, accumulate, begin, end);
  });
}

template <typename T>
void SpmmGcn(const BlockCsr& csr, std::span<const std::type_identity_t<T>> norm,
             MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out, unsigned threads) {
  CheckShape("SpmmGcn", "norm", norm.size(), csr.num_src, 1, 1);
  CheckShape("SpmmGcn", "input", in.rows(), csr.num_src, in.cols(), in.cols());
  CheckShape("SpmmGcn", "output", out.rows(), csr.num_dst, out.cols(), in.cols());
  ForSegments(threads, csr.indptr, in.cols(), [&](uint32_t begin, uint32_t end) {
    SpmmGcnRange<T>(csr.indptr.data(), csr.indices.data(),
                    csr.weights.empty() ? nullptr : csr.weights.data(), norm.data(), in, out, begin,
                    end);
  });
}

template <typename T>
void SpmmGcnTransposed(const BlockCsc& csc, std::span<const std::type_identity_t<T>> norm,
                       MatrixSpan<const std::type_identity_t<T>> grad_out, MatrixSpan<T> grad_in,
                       bool accumulate, unsigned threads) {
  CheckShape("SpmmGcnTransposed", "norm", norm.size(), csc.num_src, 1, 1);
  CheckShape("SpmmGcnTransposed", "gradient of the output", grad_out.rows(), csc.num_dst,
             grad_out.cols(), grad_out.cols());
  CheckShape("SpmmGcnTransposed", "gradient of the input", grad_in.rows(), csc.num_src,
             grad_in.cols(), grad_out.cols());
  ForSegments(threads, csc.indptr, grad_out.cols(), [&](uint32_t begin, uint32_t end) {
    SpmmGcnTransposedRange<T>(csc, norm.data(), grad_out, grad_in, accumulate, begin, end);
  });
}

#define STRATA_INSTANTIATE_SPMM(T)                                                               \
  template void Spmm<T>(const BlockCsr&, Reduce, MatrixSpan<const T>, MatrixSpan<T>, unsigned);  \
  template void SpmmTransposed<T>(const BlockCsr&, const BlockCsc&, Reduce, MatrixSpan<const T>, \
                                  MatrixSpan<T>, bool, unsigned);                                \
  template void SpmmWeighted<T>(const BlockCsr&, MatrixSpan<const T>, MatrixSpan<const T>,       \
                                MatrixSpan<T>, unsigned);                                        \
  template void SpmmWeightedTransposed<T>(const BlockCsc&, MatrixSpan<const T>,                  \
                                          MatrixSpan<const T>, MatrixSpan<T>, bool, unsigned);   \
  template void SpmmGcn<T>(const BlockCsr&, std::span<const T>, MatrixSpan<const T>,             \
                           MatrixSpan<T>, unsigned);                                             \
  template void SpmmGcnTransposed<T>(const BlockCsc&, std::span<const T>, MatrixSpan<const T>,   \
                                     MatrixSpan<T>, bool, unsigned);
STRATA_INSTANTIATE_SPMM(float)
STRATA_INSTANTIATE_SPMM(double)
#undef STRATA_INSTANTIATE_SPMM

}  // namespace strata
