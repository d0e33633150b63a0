// Layer-wise inference: the logits of a set S of nodes computed one layer at a time, each layer
// once for every node the next one needs, instead of per mini-batch, where the full L-hop
// neighbourhoods of a batch's seeds are gathered again for every batch (on a 100M-node graph,
// hundreds of millions of random feature reads to score 300K nodes). With L layers, the last
// layer's output is needed for S, layer L-2's for S and its in-neighbours, and layer l's for
// the (L-1-l)-hop in-neighbourhood closure of S, whose (L-l)-hop closure is its input. Full
// neighbourhoods, dropout off: the model evaluation with --eval-fanouts -1,... computes, up to
// rounding (the same layer code, docs/training.md, "Layer-wise inference").
//
// Each layer is two passes over nodes in id order (nn/layer.h):
// 1. Transform: the layer's input rows stream past — the features, gathered through the feature
//    store a group of consecutive members at a time (the next group's reads in flight), or the
//    previous layer's activations — and each source's row is transformed into the one matrix
//    aggregation reads at random (W h for SAGE and GCN, W h and its attention scores for GAT),
//    kept in memory for the closure's members only; SAGE's self term W_self h of each
//    destination is written in row order beside it.
// 2. Aggregate: the adjacency streams past (CscGraph::ForEachRowBlock: in memory, or read
//    sequentially from indices.bin) and blocks of consecutive destinations are aggregated from
//    their sources' transformed rows, activated, and written in row order.
// On a partitioned dataset, whose ids are renumbered so that each partition is a contiguous
// range, id order is partition order. The activations are IntermediateRows: in memory when the
// budget holds them, else row-blocked in scratch files; only the transformed rows, sources × the
// layer's width, must be in memory.
//
// Where not even those fit (a 100M-node graph's 3-hop closure is most of its nodes, ~100 GB of
// 256-wide rows), a SAGE or GCN layer runs input-first instead (BasicLayer::CombineAggregated):
// its destinations are cut into ranges in id order, each range's sums of input rows (and, past
// the input layer, its own rows) as large as the budget holds, and each range is one pass over
// the layer's input rows, streamed as above, which adds every row to the sums of the range's
// destinations it feeds; then the range's outputs are one GEMM a piece, the input layer's own
// rows read again from the store a piece at a time. The range's edges, read from the adjacency
// before its pass, are grouped by the source's group of streamed rows, so that a group's edges
// are at hand while its rows are. Memory: a range's sums, own rows and edges (8 bytes each)
// beside the chunk buffers; each pass costs one more read of the layer's input.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "fullgraph/intermediate_rows.h"
#include "minibatch/layerwise_plan.h"
#include "minibatch/session.h"
#include "nn/matrix.h"

namespace strata {

struct LayerwiseStats {
  // Per layer, input layer first: the nodes whose output it computed and the input rows it
  // transformed (the (L-1-l)- and (L-l)-hop closures of S).
  std::vector<uint64_t> output_rows;
  std::vector<uint64_t> input_rows;
  // Per layer: 0 where the transformed rows were held, else its passes over its input rows.
  std::vector<uint64_t> passes;
  bool activations_on_disk = false;  // row-blocked in scratch files
  IntermediateStats scratch;         // their transfers
  // The --memory-budget the run needed with the activations in memory and on disk, what the
  // budget held before it included.
  uint64_t budget_in_memory = 0;
  uint64_t budget_on_disk = 0;
};

// Called with consecutive pieces of the logits, in increasing node id: the pieces' ids and one
// row of logits each.
using LogitsFn = std::function<void(std::span<const uint64_t> ids, MatrixSpan<const float> logits)>;

// Runs session.model() layer by layer for `nodes` (any order; a repeated id counts once) and
// hands their logits to `each`. Every buffer is charged to session.budget(); a budget that
// cannot hold a GAT layer's transformed rows, or another layer's input-first buffers, beside its
// activations' chunk buffers is an input error naming what is needed.
LayerwiseStats RunLayerwise(Session& session, std::span<const uint64_t> nodes,
                            const LayerwiseOptions& options, const LogitsFn& each);

// What layer-wise inference of a set of nodes needs, known before the model exists: its node
// sets beside its plan's buffers.
class LayerwiseNeeds {
 public:
  LayerwiseNeeds(uint64_t sets_bytes, LayerwisePlan plan)
      : sets_bytes_(sets_bytes), plan_(std::move(plan)) {}
  // The least it runs in.
  uint64_t least_bytes() const {
    return plan_.layers() == 0 ? 0 : sets_bytes_ + plan_.LeastBytes();
  }
  // The most it charges at once when it runs with `available` bytes left to it.
  uint64_t NeededBytes(uint64_t available) {
    if (plan_.layers() == 0) return 0;
    return sets_bytes_ + plan_.Fit(available - std::min(available, sets_bytes_));
  }

 private:
  uint64_t sets_bytes_;
  LayerwisePlan plan_;
};

// Sizes RunLayerwise of `nodes` by a model of `config` without running it (nor building the
// model): training plans its evaluation with it before the model and the store's cache take
// their part of the budget, so that the budget it refuses names what evaluation needs too.
LayerwiseNeeds SizeLayerwise(const Session& session, const ModelConfig& config,
                             std::span<const uint64_t> nodes, const LayerwiseOptions& options);

// The options evaluation with --eval layerwise runs with.
LayerwiseOptions LayerwiseOptionsOf(const Session& session);

}  // namespace strata
