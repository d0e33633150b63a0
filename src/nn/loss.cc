#include "nn/loss.h"

#include <cmath>
#include <string>

#include "strata/error.h"

namespace strata {
namespace {

template <typename T>
void CheckLabels(const char* what, MatrixSpan<const T> logits, std::span<const int32_t> labels) {
  if (labels.size() != logits.rows()) {
    throw Error::Internal(std::string(what) + ": " + std::to_string(labels.size()) +
                          " labels for " + std::to_string(logits.rows()) + " rows");
  }
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < -1 || labels[i] >= static_cast<int64_t>(logits.cols())) {
      throw Error::Input("label " + std::to_string(labels[i]) + " of row " + std::to_string(i) +
                         " is outside [-1, " + std::to_string(logits.cols()) + ")");
    }
  }
}

// max and log(sum(exp(x - max))) of one row, in double.
template <typename T>
void RowLogSumExp(const T* x, size_t n, double& max, double& log_sum) {
  max = -INFINITY;
  for (size_t j = 0; j < n; ++j) max = std::max(max, double(x[j]));
  double sum = 0;
  for (size_t j = 0; j < n; ++j) sum += std::exp(double(x[j]) - max);
  log_sum = std::log(sum);
}

template <typename T>
AccuracyCount CountCorrectImpl(MatrixSpan<const T> logits, std::span<const int32_t> labels) {
  CheckLabels("CountCorrect", logits, labels);
  AccuracyCount count;
  for (size_t i = 0; i < logits.rows(); ++i) {
    if (labels[i] < 0) continue;
    const T* x = logits.row(i);
    size_t best = 0;
    for (size_t j = 1; j < logits.cols(); ++j) {
      if (x[j] > x[best]) best = j;
    }
    ++count.labelled;
    if (best == static_cast<size_t>(labels[i])) ++count.correct;
  }
  return count;
}

}  // namespace

template <typename T>
double SoftmaxCrossEntropyRows(MatrixSpan<const std::type_identity_t<T>> logits,
                               std::span<const int32_t> labels, MatrixSpan<T> grad,
                               double inv_count, double total) {
  CheckLabels("SoftmaxCrossEntropy", logits, labels);
  if (grad.rows() != logits.rows() || grad.cols() != logits.cols()) {
    throw Error::Internal("SoftmaxCrossEntropy: gradient shape differs from the logits");
  }
  const size_t n = logits.cols();
  for (size_t i = 0; i < logits.rows(); ++i) {
    T* g = grad.row(i);
    if (labels[i] < 0) {
      for (size_t j = 0; j < n; ++j) g[j] = T{0};
      continue;
    }
    const T* x = logits.row(i);
    double max, log_sum;
    RowLogSumExp(x, n, max, log_sum);
    total += log_sum - (double(x[labels[i]]) - max);
    for (size_t j = 0; j < n; ++j) {
      double p = std::exp(double(x[j]) - max - log_sum);
      g[j] = static_cast<T>((p - (j == static_cast<size_t>(labels[i]) ? 1.0 : 0.0)) * inv_count);
    }
  }
  return total;
}

template <typename T>
LossResult SoftmaxCrossEntropy(MatrixSpan<const std::type_identity_t<T>> logits,
                               std::span<const int32_t> labels, MatrixSpan<T> grad) {
  LossResult result;
  for (int32_t label : labels) result.labelled += label >= 0;
  const double inv_count = result.labelled == 0 ? 0.0 : 1.0 / double(result.labelled);
  result.loss = SoftmaxCrossEntropyRows<T>(logits, labels, grad, inv_count, 0) * inv_count;
  return result;
}

template <typename T>
void LogSoftmax(MatrixSpan<const std::type_identity_t<T>> in, MatrixSpan<T> out) {
  if (in.rows() != out.rows() || in.cols() != out.cols()) {
    throw Error::Internal("LogSoftmax: output shape differs from the input");
  }
  for (size_t i = 0; i < in.rows(); ++i) {
    double max, log_sum;
    RowLogSumExp(in.row(i), in.cols(), max, log_sum);
    for (size_t j = 0; j < in.cols(); ++j) {
      out(i, j) = static_cast<T>(double(in(i, j)) - max - log_sum);
    }
  }
}

AccuracyCount CountCorrect(MatrixSpan<const float> logits, std::span<const int32_t> labels) {
  return CountCorrectImpl(logits, labels);
}
AccuracyCount CountCorrect(MatrixSpan<const double> logits, std::span<const int32_t> labels) {
  return CountCorrectImpl(logits, labels);
}

template double SoftmaxCrossEntropyRows<float>(MatrixSpan<const float>, std::span<const int32_t>,
                                               MatrixSpan<float>, double, double);
template LossResult SoftmaxCrossEntropy<float>(MatrixSpan<const float>, std::span<const int32_t>,
                                               MatrixSpan<float>);
template double SoftmaxCrossEntropyRows<double>(MatrixSpan<const double>, std::span<const int32_t>,
                                                MatrixSpan<double>, double, double);
template LossResult SoftmaxCrossEntropy<double>(MatrixSpan<const double>, std::span<const int32_t>,
                                                MatrixSpan<double>);
template void LogSoftmax<float>(MatrixSpan<const float>, MatrixSpan<float>);
template void LogSoftmax<double>(MatrixSpan<const double>, MatrixSpan<double>);

}  // namespace strata
