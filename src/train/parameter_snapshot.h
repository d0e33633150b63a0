// ParameterSnapshot keeps a copy of a model's parameter values, charged to the budget: the
// best-validation model, so that a run can report that model's test accuracy (the
// "best-validation" evaluation point) without evaluating the test split every epoch.
//
// Invariant: Save, Restore and Views are given parameters of the same shapes, in the same
// order, as the constructor.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "nn/parameter.h"
#include "strata/memory_budget.h"

namespace strata {

class ParameterSnapshot {
 public:
  ParameterSnapshot(std::span<const Parameter> params, MemoryBudget& budget)
      : values_(budget, CountValues(params), "best-validation parameters") {}

  void Save(std::span<const Parameter> params) {
    ForEachRow(params, [](float* row, float* copy, size_t n) { std::copy_n(row, n, copy); });
    saved_ = true;
  }
  void Restore(std::span<const Parameter> params) {
    ForEachRow(params, [](float* row, float* copy, size_t n) { std::copy_n(copy, n, row); });
  }
  bool saved() const { return saved_; }

  // The copy as parameters named "best/<name>", for a checkpoint to save or restore it.
  std::vector<Parameter> Views(std::span<const Parameter> params) {
    std::vector<Parameter> views;
    float* copy = values_.data();
    for (const Parameter& p : params) {
      views.push_back(
          {"best/" + p.name, MatrixSpan<float>(copy, p.value.rows(), p.value.cols()), {}});
      copy += p.value.rows() * p.value.cols();
    }
    return views;
  }
  // The copy was filled from a checkpoint.
  void MarkRestored() { saved_ = true; }

 private:
  // fn(parameter row, its place in the copy, values in the row), rows in order.
  template <typename Fn>
  void ForEachRow(std::span<const Parameter> params, Fn fn) {
    float* copy = values_.data();
    for (const Parameter& p : params) {
      for (size_t r = 0; r < p.value.rows(); ++r, copy += p.value.cols()) {
        fn(p.value.row(r), copy, p.value.cols());
      }
    }
  }

  static uint64_t CountValues(std::span<const Parameter> params) {
    uint64_t count = 0;
    for (const Parameter& p : params) count += p.value.rows() * p.value.cols();
    return count;
  }

  ChargedArray<float> values_;
  bool saved_ = false;
};

}  // namespace strata
