// The training objective and its metric: log-softmax with cross-entropy over the seed rows,
// and accuracy.
//
// Labels are one int32 per logits row; -1 marks an unlabelled row, which contributes neither
// loss, gradient nor accuracy. The loss is the mean over labelled rows, so the gradient of
// a labelled row is (softmax(row) - onehot(label)) / labelled_rows. The log-sum-exp
// subtracts the row maximum, so large logits do not overflow. A label outside
// [-1, num_classes) throws strata::Error.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "nn/matrix.h"

namespace strata {

struct LossResult {
  double loss = 0;        // mean cross-entropy over labelled rows; 0 when there are none
  uint64_t labelled = 0;  // rows with a label >= 0
};

// Writes dL/dlogits into grad (same shape as logits; may not alias it).
template <typename T>
LossResult SoftmaxCrossEntropy(MatrixSpan<const std::type_identity_t<T>> logits,
                               std::span<const int32_t> labels, MatrixSpan<T> grad);

// The same over rows of a larger matrix, processed in row ranges: each labelled row's
// gradient is scaled by `inv_count` (1 / the whole matrix's labelled rows) and its
// cross-entropy added to `total`, in row order; returns the new total. Ranges taken in order
// give exactly the whole matrix's loss sum.
template <typename T>
double SoftmaxCrossEntropyRows(MatrixSpan<const std::type_identity_t<T>> logits,
                               std::span<const int32_t> labels, MatrixSpan<T> grad,
                               double inv_count, double total);

// out = log_softmax(in) row by row (may alias).
template <typename T>
void LogSoftmax(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out);

struct AccuracyCount {
  uint64_t correct = 0;
  uint64_t labelled = 0;
  double accuracy() const { return labelled == 0 ? 0.0 : double(correct) / double(labelled); }
};

// Rows whose arg-max (the first one on ties) equals the label, among labelled rows.
AccuracyCount CountCorrect(MatrixSpan<const float> logits, std::span<const int32_t> labels);
AccuracyCount CountCorrect(MatrixSpan<const double> logits, std::span<const int32_t> labels);

}  // namespace strata
