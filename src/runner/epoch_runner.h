// EpochRunner is "what runs an epoch" for a training path: it trains the model for one epoch,
// measures accuracy on a split, and exposes what a checkpoint saves. Train() (train/train.cc)
// is the epoch loop around it — evaluation schedule, checkpoints, metrics, resume — and is
// the same for every path: mini-batches (MiniBatchRunner), and the macro-batch and full-graph
// paths that are its siblings.
//
// Invariant: Parameters() and optimizer() name the same tensors, in the same order, for the
// life of the runner, so a checkpoint written after any epoch restores into a fresh runner.
#pragma once

#include <cstdint>
#include <vector>

#include "nn/model.h"
#include "nn/optimizer.h"
#include "nn/parameter.h"
#include "strata/dataset.h"
#include "strata/train.h"

namespace strata {

class EpochRunner {
 public:
  virtual ~EpochRunner() = default;

  // Trains epoch `epoch` and reports it; val_acc and peak_rss_bytes are left to the caller.
  virtual EpochReport TrainEpoch(uint64_t epoch) = 0;
  // The current model's accuracy on the labelled nodes of `split`.
  virtual double Accuracy(Split split) = 0;
  // The training steps an epoch plans (the full graph: one).
  virtual uint64_t planned_batches() const = 0;

  virtual const ModelConfig& model_config() const = 0;
  virtual std::vector<Parameter> Parameters() = 0;
  virtual Optimizer& optimizer() = 0;
};

}  // namespace strata
