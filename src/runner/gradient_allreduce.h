// GradientAllreduce averages a model's gradients over the ranks of a data-parallel run, so that
// N ranks stepping on their shares of a batch take the step one process takes on the whole
// batch. A rank's gradient is the mean over its labelled seeds; it is weighted by their count,
// summed over the ranks and divided by the total count, which is the mean over the batch even
// when the shares differ in size (an epoch's last batch).
//
// One bucket per layer: when a layer's backward has finished (the output layer's first), its
// gradients are packed into the layer's bucket, the count in the bucket's last element, and the
// bucket's sum is started, so that it travels while the layers below still run backward. Finish
// waits for every bucket and writes the averaged gradients back for the optimizer.
//
// Invariants: per step every rank calls BeginStep, LayerDone once for each layer in the same
// order, then Finish; the parameters' views outlive this object.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/parameter.h"
#include "strata/collective.h"
#include "strata/memory_budget.h"

namespace strata {

class GradientAllreduce {
 public:
  // layers[l]: layer l's parameters. The buckets (a copy of every gradient) are charged to
  // `budget`.
  GradientAllreduce(Collective& ranks, std::vector<std::vector<Parameter>> layers,
                    MemoryBudget& budget);

  // A step begins in which this rank's loss covers `labelled` seeds.
  void BeginStep(uint64_t labelled);
  // Layer `layer`'s gradients are final: starts their sum.
  void LayerDone(size_t layer);
  // Waits for every sum and writes the averaged gradients; returns the step's labelled seeds
  // over all ranks.
  uint64_t Finish();

  // Seconds this rank has spent in LayerDone and Finish (packing, starting, waiting).
  double seconds() const { return seconds_; }
  // Bytes each rank contributes per step: the parameters and a count per layer, as float32.
  uint64_t bytes_per_step() const;

 private:
  Collective& ranks_;
  std::vector<std::vector<Parameter>> layers_;
  std::vector<ChargedArray<float>> buckets_;  // per layer: its gradients, then the count
  float labelled_ = 0;
  double seconds_ = 0;
};

}  // namespace strata
