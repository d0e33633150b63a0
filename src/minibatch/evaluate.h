// Evaluation of the mini-batch path: accuracy on a set of nodes with the evaluation fanouts
// (full neighbourhoods by default), in chunks of kEvalBatchSeeds seeds, each evaluated in
// batches of the memory plan's eval_seeds, whose blocks and input features are charged to the
// run's batch reserve; cutting a chunk changes no prediction, since a node's sampled
// neighbours depend on its id and the chunk's stream, not on the batch it is in. Or
// layer-wise (--eval layerwise): every layer once over the nodes' in-neighbourhood closure,
// full neighbourhoods, streaming the features and the adjacency in id order
// (minibatch/layerwise_inference.h).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <vector>

#include "minibatch/session.h"
#include "nn/loss.h"

namespace strata {

// Counts the correct predictions of session.model() on the labelled nodes among `ids`; the
// session must plan sampled evaluation (its memory plan's eval_seeds > 0).
// Data-parallel evaluation: with `ranks` > 1 only the batches b with b % ranks == rank are
// evaluated (the caller sums the ranks' counts): the same batches, and so the same predictions,
// as one process evaluates.
AccuracyCount EvaluateNodes(Session& session, std::span<const uint64_t> ids, uint32_t rank = 0,
                            uint32_t ranks = 1);

// Counts the correct predictions on each of `node_lists` from one layer-wise pass over their
// union, whatever the evaluation fanouts; a node listed twice in one list counts once.
std::vector<AccuracyCount> EvaluateLayerwise(
    Session& session, std::initializer_list<std::span<const uint64_t>> node_lists);

}  // namespace strata
