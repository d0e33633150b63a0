#include "nn/row_copy.h"

#include <string>

#include "nn/parallel.h"
#include "nn/row_ops.h"
#include "strata/error.h"

namespace strata {

void CopyRows(MatrixSpan<const float> from, MatrixSpan<float> to, unsigned threads) {
  if (from.rows() != to.rows() || from.cols() != to.cols()) {
    throw Error::Internal("CopyRows: " + std::to_string(from.rows()) + "x" +
                          std::to_string(from.cols()) + " into " + std::to_string(to.rows()) + "x" +
                          std::to_string(to.cols()));
  }
  ForRows(threads, to.rows(), to.cols(), [&](uint64_t begin, uint64_t end) {
    for (uint64_t r = begin; r < end; ++r) CopyRow(to.row(r), from.row(r), to.cols());
  });
}

}  // namespace strata
