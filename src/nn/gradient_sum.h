// GradientSum adds up a model's parameter gradients over the pieces of one batch, each piece's
// mean gradient weighted by its labelled seeds, and leaves their weighted mean in the
// gradients: the mean gradient of the whole batch, as one backward pass over it would leave it
// (up to the order of float sums), for a batch trained in pieces to save memory.
//
// Invariants: the sum has one value per parameter value; Add with `first` starts a new sum, so
// a sum abandoned part-way (an epoch cut short) never leaks into the next batch.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/parameter.h"

namespace strata {

class GradientSum {
 public:
  explicit GradientSum(std::vector<Parameter> params);

  // Adds the gradients the last backward pass left, the mean over `labelled` seeds; `first`
  // drops what was summed before.
  void Add(uint64_t labelled, bool first);
  // Leaves the weighted mean of the sum in the gradients (zeros when no seed was labelled) and
  // returns the labelled seeds summed.
  uint64_t Finish();

  uint64_t bytes() const { return sum_.capacity() * sizeof(float); }

 private:
  std::vector<Parameter> params_;
  std::vector<float> sum_;
  uint64_t labelled_ = 0;
};

}  // namespace strata
