#include "nn/edge_softmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "nn/parallel.h"
#include "strata/error.h"

namespace strata {
namespace {

template <typename A, typename B>
void CheckEdges(const char* kernel, const BlockCsr& csr, const A& a, const B& b) {
  if (a.rows() != csr.num_edges() || b.rows() != a.rows() || b.cols() != a.cols()) {
    throw Error::Internal(std::string(kernel) + ": per-edge matrices must be edges x heads");
  }
}

}  // namespace

template <typename T>
void EdgeSoftmax(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> logits,
                 MatrixSpan<T> probs, unsigned threads) {
  CheckEdges("EdgeSoftmax", csr, logits, probs);
  const size_t heads = logits.cols();
  ForSegments(threads, csr.indptr, heads * 3, [&](uint32_t begin, uint32_t end) {
    std::vector<T> max(heads), sum(heads);
    for (uint32_t d = begin; d < end; ++d) {
      const uint32_t e0 = csr.indptr[d];
      const uint32_t e1 = csr.indptr[d + 1];
      if (e0 == e1) continue;
      std::fill(max.begin(), max.end(), -std::numeric_limits<T>::infinity());
      for (uint32_t e = e0; e < e1; ++e) {
        for (size_t h = 0; h < heads; ++h) max[h] = std::max(max[h], logits(e, h));
      }
      std::fill(sum.begin(), sum.end(), T{0});
      for (uint32_t e = e0; e < e1; ++e) {
        for (size_t h = 0; h < heads; ++h) {
          T p = std::exp(logits(e, h) - max[h]);
          probs(e, h) = p;
          sum[h] += p;
        }
      }
      for (size_t h = 0; h < heads; ++h) sum[h] = T{1} / sum[h];
      for (uint32_t e = e0; e < e1; ++e) {
        for (size_t h = 0; h < heads; ++h) probs(e, h) *= sum[h];
      }
    }
  });
}

template <typename T>
void EdgeSoftmaxBackward(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> probs,
                         MatrixSpan<const std::type_identity_t<T>> grad_probs,
                         MatrixSpan<T> grad_logits, unsigned threads) {
  CheckEdges("EdgeSoftmaxBackward", csr, probs, grad_probs);
  CheckEdges("EdgeSoftmaxBackward", csr, probs, grad_logits);
  const size_t heads = probs.cols();
  ForSegments(threads, csr.indptr, heads * 3, [&](uint32_t begin, uint32_t end) {
    std::vector<T> dot(heads);
    for (uint32_t d = begin; d < end; ++d) {
      std::fill(dot.begin(), dot.end(), T{0});
      for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
        for (size_t h = 0; h < heads; ++h) dot[h] += probs(e, h) * grad_probs(e, h);
      }
      for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
        for (size_t h = 0; h < heads; ++h) {
          grad_logits(e, h) = probs(e, h) * (grad_probs(e, h) - dot[h]);
        }
      }
    }
  });
}

template void EdgeSoftmax<float>(const BlockCsr&, MatrixSpan<const float>, MatrixSpan<float>,
                                 unsigned);
template void EdgeSoftmax<double>(const BlockCsr&, MatrixSpan<const double>, MatrixSpan<double>,
                                  unsigned);
template void EdgeSoftmaxBackward<float>(const BlockCsr&, MatrixSpan<const float>,
                                         MatrixSpan<const float>, MatrixSpan<float>, unsigned);
template void EdgeSoftmaxBackward<double>(const BlockCsr&, MatrixSpan<const double>,
                                          MatrixSpan<const double>, MatrixSpan<double>, unsigned);

}  // namespace strata
