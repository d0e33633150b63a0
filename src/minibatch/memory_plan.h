// MiniBatchMemoryPlan is what a mini-batch run sets aside before it starts for everything that
// grows while it runs, each sized for the largest batch the run can meet (BatchBound), so that
// a run that starts never stops later for memory:
//   - the model's buffers, for the larger of a training and an evaluation batch in each layer;
//   - the optimizer's state (Adam's two moments, SGD's momentum);
//   - the batch reserve: three of the largest training batches (their blocks and input
//     features), for the one the step trains, the one ready for it and the one being
//     gathered, which therefore never wait for room (later batches run ahead only in what the
//     budget has free); evaluation batches use it between epochs, as many seeds to a batch as
//     fit it (evaluating alone: a quarter of the budget; cutting a batch changes no
//     prediction);
//   - room the cache must leave for charges made after it opens: the best parameters'
//     snapshot and the next epochs' shuffled seeds.
// A budget too small for the plan is refused at once, with the smallest budget that works.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "minibatch/batch_bound.h"
#include "nn/model.h"
#include "strata/memory_budget.h"
#include "strata/train.h"

namespace strata {

// Seeds per evaluation batch at most; the plan halves it until a batch fits the reserve.
inline constexpr uint64_t kEvalBatchSeeds = 1024;
// Training batches the reserve holds: the step's, the one ready for it, the one gathered.
inline constexpr uint32_t kReservedBatches = 3;

struct MiniBatchMemoryInputs {
  const DegreeProfile* degrees = nullptr;
  ModelConfig model;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  const SamplingOptions* sampling = nullptr;
  bool labor = false;
  bool training = true;          // false: evaluation alone (strata eval)
  bool sampled_eval = true;      // evaluation batches are sampled (not layer-wise or none)
  uint64_t available_bytes = 0;  // what the budget has left
  uint64_t train_ids = 0;        // the length of an epoch's permutation
  uint64_t fixed_bytes = 0;      // charged at start after the plan: the store's, GCN's norms
};

struct MiniBatchMemoryPlan {
  BatchBound train;         // the largest training batch
  BatchBound eval;          // the largest evaluation batch of eval_seeds seeds
  uint64_t eval_seeds = 0;  // seeds per evaluation batch (0 without sampled evaluation)
  uint64_t model_bytes = 0;
  uint64_t optimizer_bytes = 0;
  uint64_t batch_reserve_bytes = 0;
  uint64_t later_bytes = 0;   // charged after the store opens: snapshot, the permutations
  uint64_t fixed_bytes = 0;   // charged at start after the plan
  bool eval_largest = false;  // an evaluation batch, not the training batches, sets the reserve
  // What to lower when the plan does not fit: the options behind its largest part.
  std::string advice;

  // What the plan sets aside now (model, optimizer, batch reserve).
  uint64_t reserved_bytes() const { return model_bytes + optimizer_bytes + batch_reserve_bytes; }
  // Everything the plan needs beyond what is charged already.
  uint64_t needed_bytes() const { return reserved_bytes() + later_bytes + fixed_bytes; }
};

// Bytes one sampled batch of `bound` holds: its blocks and its input features.
uint64_t BatchBytes(const BatchBound& bound, uint64_t feature_dim);
// Seeds of a training batch's largest piece: all its seeds unless it is trained in pieces.
uint64_t PieceSeeds(const SamplingOptions& sampling);

// The fanouts evaluation batches are sampled with: the options' eval_fanouts, or by default
// every neighbour (none for an MLP), one per training fanout.
std::vector<int> EvalFanouts(const SamplingOptions& sampling, ModelKind model);

// A pure function of the graph's degrees and the options.
MiniBatchMemoryPlan PlanMiniBatchMemory(const MiniBatchMemoryInputs& in);

// Throws an input error naming the smallest budget that works when `budget` has less left
// than the plan needs.
void CheckPlanFits(const MiniBatchMemoryPlan& plan, const MemoryBudget& budget);

}  // namespace strata
