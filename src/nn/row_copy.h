// CopyRows copies a matrix into another of the same shape whose rows lie elsewhere: a column
// range of a wider matrix, or a chunk of a taller one. The full-graph path stages column slices,
// chunks of intermediates and gradients this way, every row of a matrix each pass.
#pragma once

#include "nn/matrix.h"

namespace strata {

// to(i, j) = from(i, j), row ranges on up to `threads` threads (ForRows); the shapes must match.
void CopyRows(MatrixSpan<const float> from, MatrixSpan<float> to, unsigned threads = 1);

}  // namespace strata
