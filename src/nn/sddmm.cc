#include "nn/sddmm.h"

#include <string>

#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {
namespace {

void Check(bool ok, const char* kernel, const std::string& what) {
  if (!ok) throw Error::Internal(std::string(kernel) + ": " + what);
}

}  // namespace

template <typename T>
void SddmmAdd(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> src_score,
              MatrixSpan<const std::type_identity_t<T>> dst_score, MatrixSpan<T> out,
              unsigned threads) {
  const size_t heads = out.cols();
  Check(src_score.rows() == csr.num_src && src_score.cols() == heads, "SddmmAdd",
        "source scores must be num_src x heads");
  Check(dst_score.rows() == csr.num_dst && dst_score.cols() == heads, "SddmmAdd",
        "destination scores must be num_dst x heads");
  Check(out.rows() == csr.num_edges(), "SddmmAdd", "output must have one row per edge");
  ForSegments(threads, csr.indptr, heads, [&](uint32_t begin, uint32_t end) {
    for (uint32_t d = begin; d < end; ++d) {
      const T* er = dst_score.row(d);
      for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
        const T* el = src_score.row(csr.indices[e]);
        T* o = out.row(e);
        for (size_t h = 0; h < heads; ++h) o[h] = el[h] + er[h];
      }
    }
  });
}

template <typename T>
void SddmmDot(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> dst_rows,
              MatrixSpan<const std::type_identity_t<T>> src_rows, MatrixSpan<T> out,
              unsigned threads) {
  const size_t heads = out.cols();
  Check(heads > 0 && dst_rows.cols() % heads == 0, "SddmmDot", "columns must split into heads");
  Check(dst_rows.rows() == csr.num_dst, "SddmmDot", "destination rows must be num_dst");
  Check(src_rows.rows() == csr.num_src && src_rows.cols() == dst_rows.cols(), "SddmmDot",
        "source rows must be num_src x the destination columns");
  Check(out.rows() == csr.num_edges(), "SddmmDot", "output must have one row per edge");
  const size_t f = dst_rows.cols() / heads;
  ForSegments(threads, csr.indptr, dst_rows.cols(), [&](uint32_t begin, uint32_t end) {
    for (uint32_t d = begin; d < end; ++d) {
      const T* y = dst_rows.row(d);
      for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
        const T* x = src_rows.row(csr.indices[e]);
        T* o = out.row(e);
        for (size_t h = 0; h < heads; ++h) o[h] = DotRow(y + h * f, x + h * f, f);
      }
    }
  });
}

template <typename T>
void SumEdgesByDestination(const BlockCsr& csr, MatrixSpan<const std::type_identity_t<T>> values,
                           MatrixSpan<T> out, unsigned threads) {
  const size_t heads = values.cols();
  Check(values.rows() == csr.num_edges(), "SumEdgesByDestination", "one row per edge expected");
  Check(out.rows() == csr.num_dst && out.cols() == heads, "SumEdgesByDestination",
        "output must be num_dst x heads");
  ForSegments(threads, csr.indptr, heads, [&](uint32_t begin, uint32_t end) {
    for (uint32_t d = begin; d < end; ++d) {
      T* o = out.row(d);
      ZeroRow(o, heads);
      for (uint32_t e = csr.indptr[d]; e < csr.indptr[d + 1]; ++e) {
        const T* v = values.row(e);
        for (size_t h = 0; h < heads; ++h) o[h] += v[h];
      }
    }
  });
}

template <typename T>
void SumEdgesBySource(const BlockCsc& csc, MatrixSpan<const std::type_identity_t<T>> values,
                      MatrixSpan<T> out, unsigned threads) {
  const size_t heads = values.cols();
  Check(values.rows() == csc.edge.size(), "SumEdgesBySource", "one row per edge expected");
  Check(out.rows() == csc.num_src && out.cols() == heads, "SumEdgesBySource",
        "output must be num_src x heads");
  ForSegments(threads, csc.indptr, heads, [&](uint32_t begin, uint32_t end) {
    for (uint32_t s = begin; s < end; ++s) {
      T* o = out.row(s);
      ZeroRow(o, heads);
      for (uint32_t j = csc.indptr[s]; j < csc.indptr[s + 1]; ++j) {
        const T* v = values.row(csc.edge[j]);
        for (size_t h = 0; h < heads; ++h) o[h] += v[h];
      }
    }
  });
}

template <typename T>
void HeadDots(MatrixSpan<const std::type_identity_t<T>> rows,
              MatrixSpan<const std::type_identity_t<T>> vectors, MatrixSpan<T> out,
              unsigned threads) {
  const size_t heads = vectors.rows();
  const size_t f = vectors.cols();
  Check(rows.cols() == heads * f, "HeadDots", "rows must have heads x features columns");
  Check(out.rows() == rows.rows() && out.cols() == heads, "HeadDots",
        "output must be rows x heads");
  ForRows(threads, rows.rows(), rows.cols(), [&](uint64_t begin, uint64_t end) {
    for (uint64_t v = begin; v < end; ++v) {
      const T* x = rows.row(v);
      T* o = out.row(v);
      for (size_t h = 0; h < heads; ++h) o[h] = DotRow(x + h * f, vectors.row(h), f);
    }
  });
}

#define STRATA_INSTANTIATE_SDDMM(T)                                                           \
  template void SddmmAdd<T>(const BlockCsr&, MatrixSpan<const T>, MatrixSpan<const T>,        \
                            MatrixSpan<T>, unsigned);                                         \
  template void SddmmDot<T>(const BlockCsr&, MatrixSpan<const T>, MatrixSpan<const T>,        \
                            MatrixSpan<T>, unsigned);                                         \
  template void SumEdgesByDestination<T>(const BlockCsr&, MatrixSpan<const T>, MatrixSpan<T>, \
                                         unsigned);                                           \
  template void SumEdgesBySource<T>(const BlockCsc&, MatrixSpan<const T>, MatrixSpan<T>,      \
                                    unsigned);                                                \
  template void HeadDots<T>(MatrixSpan<const T>, MatrixSpan<const T>, MatrixSpan<T>, unsigned);
STRATA_INSTANTIATE_SDDMM(float)
STRATA_INSTANTIATE_SDDMM(double)
#undef STRATA_INSTANTIATE_SDDMM

}  // namespace strata
