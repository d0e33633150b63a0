// What Train() does differently when several ranks train one model together (mpirun): each
// rank's options (its share of every batch, its macro-batches), the resumed state that rank 0
// reads and sends to the others, and the check after each epoch that every rank holds the same
// parameters.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "nn/optimizer.h"
#include "nn/parameter.h"
#include "strata/collective.h"
#include "strata/train.h"
#include "train/training_checkpoint.h"

namespace strata {

// The options rank ranks.rank() trains with: the batch divided among the ranks (an input error
// when it does not divide evenly), the rank's seeds and macro-batches, and progress on rank 0
// only. Refuses, in one line
// each, what one process alone can run: the full graph, and adaptive reuse (its passes follow
// one rank's disk).
TrainOptions DataParallelOptions(const TrainOptions& options, const Collective& ranks);

// Rank 0's resume point, restored there from the checkpoint (nullopt: there was none), sent
// with the parameters, the optimizer's state and the best-validation copy to every rank, which
// returns it.
std::optional<ResumePoint> ShareResumePoint(Collective& ranks, std::optional<ResumePoint> point,
                                            std::span<const Parameter> params, Optimizer& optimizer,
                                            std::span<const Parameter> best_snapshot);

// Before the first step: an input error on every rank unless every rank trains what rank 0
// does (the same dataset by its meta.json digest, seed, initial parameters, epochs and steps
// an epoch plans), since ranks that disagree would wait for each other's sums forever.
void AgreeOnRun(Collective& ranks, const RunIdentity& identity, std::span<const Parameter> params,
                uint64_t epochs, uint64_t planned_batches);

// The xxh64 of the parameters' values, as 16 hex digits; an internal error on every rank when
// any rank's differs from rank 0's (their gradients were summed differently).
std::string AgreeOnParameters(Collective& ranks, std::span<const Parameter> params);

}  // namespace strata
