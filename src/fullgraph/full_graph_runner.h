// FullGraphRunner is the EpochRunner of `strata train --full-graph --model gcn|sage|gat`: one
// forward and one backward over the whole graph per epoch (Kipf's GCN, GraphSAGE with the
// mean aggregator, or GAT, without sampling), the adjacency and the input features streamed
// from disk in RoBW blocks (AIRES) when the budget cannot hold them.
//
// Per layer l, with H_0 the (dropped-out) input features: P = H_l W_l, then
// H_{l+1} = Â P + b_l (ReLU or ELU and dropout between layers); backward
// dP = Âᵀ dH_{l+1}, dW_l = H_lᵀ dP, dH_l = dP W_lᵀ. SAGE: Â is the mean over in-neighbours,
// W_l its W_neigh, and a self term S = H_l W_self is added to Â P (its gradient is dH_{l+1}
// itself: dW_self = H_lᵀ dH_{l+1}, and dH_l gains dH_{l+1} W_selfᵀ); S, and then that
// gradient, are walked in row order, one more intermediate. Transforming before propagating
// keeps every propagated matrix N × (hidden or classes) — narrow — whatever the input's width;
// the input features are only ever multiplied by W_0 (forward) and by dP (backward), one row
// group at a time as their blocks stream past. GAT: the attention (attention.h) gathers
// [H W | el], which is also kept in row order for the backward pass; that pass is two more
// gathers on an undirected graph, and on a directed one a scatter by destination into a second
// N-row matrix held beside the gathered one.
//
// Memory (all charged to the budget, placed by PlanFullGraph, full_graph_plan.h): the graph's
// row offsets (grouped), GCN's normalisation or SAGE's inverse in-degrees, labels, the model and
// optimizer, and the one N-row matrix a propagation gathers from (P forward; dH backward on an
// undirected graph, dP on a directed one, whose transpose scatters; GAT: [H W | el], then [dL/dagg
// | statistics], or on a directed graph [H W | el] beside the scatter's sums) — whole, or when N ×
// its width does not fit, one column slice of it at a time, the slices on disk (column_slices.h): a
// propagation then runs once per slice, each output column depending on its input column only (GAT:
// a group of heads at a time, each head depending on its own columns only, attention.h). The other
// N-row intermediates (the layers' outputs, the gradient that is not gathered, SAGE's self terms,
// GAT's kept rows, statistics and source gradients) are only ever walked in row order, so they stay
// in memory when the budget holds them and are row-blocked on disk otherwise (intermediate_rows.h).
// What is left holds the adjacency and the features resident when they fit, else two RoBW buffers
// for each stream.
//
// The model is the mini-batch GCN's, SAGE's or GAT's: the same initialisation, parameter names
// and dropout streams (nn/model_seeds.h, nn/gcn_conv.h, nn/sage_conv.h, nn/gat_conv.h), so both
// paths start from one model and read each other's checkpoints. (GAT's attention dropout masks
// are drawn per edge, attention.h, not as the mini-batch layer draws them.)
//
// Determinism: dropout masks depend on (seed, epoch, layer, row) — the input's on its row
// group — and every sum runs in an order the blocks do not change (row_blocks.h,
// propagation.h): dense products and the weight gradients of hidden layers run per chunk
// of TrainOptions::full_graph_chunk_rows rows whatever the plan, so the same seed gives the
// same losses whatever the budget.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "fullgraph/attention.h"
#include "fullgraph/column_slices.h"
#include "fullgraph/full_graph_plan.h"
#include "fullgraph/grouped_row_offsets.h"
#include "fullgraph/input_products.h"
#include "fullgraph/intermediate_rows.h"
#include "fullgraph/propagation.h"
#include "fullgraph/row_block_source.h"
#include "nn/layer_bias.h"
#include "nn/matrix.h"
#include "runner/epoch_runner.h"

namespace strata {

class FullGraphRunner final : public EpochRunner {
 public:
  // Throws an input error naming the option for options CheckModelOptions or
  // CheckFullGraphOptions refuse, and one naming the smallest budget that works when the budget
  // cannot hold the intermediates and one row group of each stream.
  FullGraphRunner(const TrainOptions& options, Dataset dataset);
  ~FullGraphRunner() override;

  EpochReport TrainEpoch(uint64_t epoch) override;
  double Accuracy(Split split) override;
  uint64_t planned_batches() const override { return 1; }
  // The current model's logits of every node (dropout off), chunk by chunk in row order:
  // fn(rows, first row). Computed once per set of parameters.
  void ForEachLogitsChunk(const std::function<void(MatrixSpan<const float>, uint64_t)>& fn);

  const ModelConfig& model_config() const override { return config_; }
  std::vector<Parameter> Parameters() override;
  Optimizer& optimizer() override { return *optimizer_; }
  MemoryBudget& budget() { return budget_; }
  const FullGraphPlan& plan() const { return plan_; }

 private:
  struct Layer {
    Matrix weight, weight_grad;
    LayerBias<float> bias;
    FullGraphLayerShape shape;
    Matrix attn_l, attn_l_grad, attn_r, attn_r_grad;  // GAT's, heads × per_head
  };

  // Logits of every node into outputs_.back(); training applies dropout with `step_seed`.
  void Forward(bool training, uint64_t step_seed);
  void Backward(uint64_t step_seed);
  // GAT's layer l: forward into outputs_[l] (FinishRows applied); backward from its output's
  // gradient in gradient_ to the previous layer's (or to the first layer's weights).
  void AttentionForward(size_t l, bool training, uint64_t step_seed);
  void AttentionBackward(size_t l, uint64_t step_seed);
  // The backward pass of layer l's group of heads `a`, from the layer's output gradient
  // (gradient_) and the group's [H W | el] rows, gathered in `transformed` (and kept in row
  // order), to the group's source rows, and the bias gradient with the first group: on an
  // undirected graph by two gathers, on a directed one by a scatter (attention.h).
  void BackwardByGathers(size_t l, const GraphAttention& a, MatrixSpan<const float> transformed,
                         IntermediateRows& kept, IntermediateRows& source);
  void BackwardByScatter(size_t l, const GraphAttention& a, MatrixSpan<const float> transformed,
                         IntermediateRows& source);
  // The columns of a layer's output gradient rows that group `a`'s output has.
  MatrixSpan<const float> GroupGradient(const GraphAttention& a,
                                        MatrixSpan<const float> grad_out) const;
  GraphAttention AttentionOf(const Layer& layer, double dropout, uint64_t seed) const;
  // The heads of a group of `shape`'s (the plan's heads per slice; an averaged layer's all).
  size_t GroupHeads(const FullGraphLayerShape& shape) const {
    return shape.concat ? std::min(shape.heads, plan_.heads_per_slice) : shape.heads;
  }
  // Group g of a layer's heads, of the layer's attention `a`.
  GraphAttention GroupOf(const GraphAttention& a, size_t g) const {
    const size_t heads = GroupHeads({.heads = a.heads, .concat = a.concat});
    return a.Heads(g * heads, std::min(heads, a.heads - g * heads));
  }
  // Staged rows [begin, end) (inside one chunk) of `width` columns.
  MatrixSpan<float> StagedRows(uint64_t begin, uint64_t end, size_t width) {
    return MatrixSpan<float>(group_staging_.data(), std::min(nodes_, chunk_rows_), width)
        .RowRange(begin % chunk_rows_, end - begin);
  }
  // Layer l's output rows, from `first` on, after aggregation: + bias, and for a hidden layer
  // the activation and dropout p; rows may be a column slice, from first_column on.
  void FinishRows(size_t l, double p, uint64_t seed, MatrixSpan<float> rows, uint64_t first,
                  size_t first_column = 0);
  // grad (dL/d of layer l's output h) through its activation and dropout, rows from `first`.
  void ActivationBackward(size_t l, MatrixSpan<const float> h, MatrixSpan<float> grad,
                          uint64_t step_seed, uint64_t first);
  // A product of layer l's input H_l (the input features, dropped out and row-normalised, or
  // the previous layer's output) and a weight, written to the rows out(begin, end) returns.
  struct InputProduct {
    MatrixSpan<const float> weight;
    std::function<MatrixSpan<float>(uint64_t, uint64_t)> out;
  };
  // Each product, walking H_l in row order; done(begin, end) after each piece.
  void Transform(size_t l, bool training, uint64_t step_seed,
                 std::span<const InputProduct> products,
                 const std::function<void(uint64_t, uint64_t)>& done);
  // The mean training loss of the logits; dL/dlogits where Backward starts from it.
  double LossAndGradient();
  // Â's weights (GCN's normalisation or SAGE's mean), and those of Âᵀ as a gather on an
  // undirected graph.
  PropagationWeights Aggregation() const;
  PropagationWeights TransposedGather() const;
  // out = Â in with `weights`, `in` the propagation input of `width` columns (whole or by
  // slices), streaming the adjacency's blocks and writing out in row order, slice by slice;
  // `then` is called with each written piece (of slice s: its columns from first_column on)
  // before it is handed to `out`: then(rows, first row, s, first_column).
  using PropagatedRowsFn = std::function<void(MatrixSpan<float>, uint64_t, size_t, size_t)>;
  void PropagateInto(size_t width, const PropagationWeights& weights, ColumnSlices& out,
                     const PropagatedRowsFn& then);
  // Layer 0's backward on an undirected graph, from G in the propagation input: dP = Âᵀ G
  // propagated a span of rows at a time beside the features, into dW = Xᵀ dP (SAGE: and
  // dW_self = Xᵀ G), so that dP is never stored whole: sliced, the slices before the last are
  // propagated into gradient_ first, and each span's rows of the last are joined to theirs.
  void FirstLayerBackward(uint64_t step_seed);
  // Layer 0's weight gradients from an input row group and its rows of dP (row-normalised in
  // place): dW += Xᵀ dP (SAGE: W_neigh's, and W_self's from its rows of G).
  void InputGradients(const InputGroup& group, MatrixSpan<float> dp);
  // The propagation input = Âᵀ grad_out for a directed graph, reading grad_out in row order
  // (once per slice); `each` is called once with each piece of it and its first row.
  void ScatterTransposed(ColumnSlices& grad_out, size_t width,
                         const std::function<void(MatrixSpan<const float>, uint64_t)>& each);
  // The propagation input of `width` columns walked in row order, to write or to read:
  // BeginGathered, GatheredRows for consecutive pieces inside chunks, EndGathered.
  enum class GatheredPass { kWrite, kRead };
  void BeginGathered(size_t width, GatheredPass pass);
  MatrixSpan<float> GatheredRows(uint64_t begin, uint64_t end);
  void EndGathered();
  bool Sliced(size_t width) const { return width > plan_.slice_width; }
  void ForEachAdjacencyPiece(const std::function<void(const AdjacencyBlock&)>& fn);
  // Rows [begin, end) of an adjacency block, whose rows' ids `row` addresses.
  // Its offsets are expanded into piece_offsets_: valid until the next piece is made.
  AdjacencyBlock AdjacencyPiece(uint64_t begin, uint64_t end, const RowAddress& row);
  // Offsets of rows [begin, end] of the adjacency, expanded into piece_offsets_ (at most a
  // chunk's rows: an internal error otherwise).
  std::span<const uint64_t> PieceOffsets(uint64_t begin, uint64_t end);
  // Calls fn(begin, end) for the chunks of [0, N), in order.
  void ForEachChunk(const std::function<void(uint64_t, uint64_t)>& fn) const;
  MatrixSpan<float> Gathered(size_t width) { return {gathered_base_, nodes_, width}; }
  // Of a layer's weight (or its gradient), in_dim rows per part: the part that multiplies the
  // propagated rows (GCN: all of it; SAGE: W_neigh) and SAGE's W_self.
  MatrixSpan<float> NeighbourPart(Matrix& m, size_t in) const {
    return sage_ ? m.span().RowRange(in, in) : m.span();
  }
  static MatrixSpan<float> SelfPart(Matrix& m, size_t in) { return m.span().RowRange(0, in); }
  IntermediateStats IntermediateTotals() const;
  // Calls fn per input group (InputGroupRows; dropped out when training), in row order.
  void ForEachInputGroup(bool training, uint64_t step_seed,
                         const std::function<void(const InputGroup&)>& fn);
  // A sparse input group's values made ready for its products in one parallel call, a
  // kFullGraphRowGroup of rows at a time: where they are the scratch, filled (ones, or a copy of
  // `stored`); then the rows' norms, of the values before dropout; then the dropout, each
  // kFullGraphRowGroup rows' mask from a seed of its own.
  void PrepareSparseGroup(const InputGroup& group, const float* stored, double p,
                          uint64_t step_seed);
  RowStreamStats StreamStats() const;
  int32_t LabelOf(uint64_t v) const {
    return narrow_labels_.size() > 0 ? narrow_labels_[v] : wide_labels_[v];
  }
  // The labels of nodes [begin, end) (within one chunk) in `split`, -1 for the others.
  std::span<const int32_t> SplitLabels(Split split, uint64_t begin, uint64_t end);

  Dataset dataset_;
  MemoryBudget budget_;
  ModelConfig config_;
  bool sage_ = false;
  bool gat_ = false;
  uint64_t nodes_ = 0;
  GroupedRowOffsets adjacency_offsets_;   // each node's first in-neighbour
  ChargedArray<uint64_t> piece_offsets_;  // an adjacency piece's, expanded (AdjacencyPiece)
  GroupedRowOffsets feature_offsets_;     // sparse features: each row's first stored value
  std::array<uint64_t, kFullGraphSpanRows + 1> group_indptr_{};  // the input group's offsets
  ChargedArray<float> norm_;  // GCN: its normalisation; SAGE: 1 / in-degree
  bool row_normalize_ = false;
  std::array<float, kFullGraphSpanRows> group_scale_{};  // the input group's row normalisation
  // Each node's label: 16 bits when the classes allow (full_graph_plan.h), else 32.
  ChargedArray<int16_t> narrow_labels_;
  ChargedArray<int32_t> wide_labels_;
  ChargedArray<uint8_t> splits_;        // each node's splits, a bit per Split
  ChargedArray<int32_t> chunk_labels_;  // SplitLabels' answer
  std::vector<Layer> layers_;
  std::unique_ptr<Optimizer> optimizer_;
  uint64_t chunk_rows_ = 0;
  double train_inv_count_ = 0;  // 1 / labelled training nodes
  // The propagation input, N × the widest layer output (GAT: the widest gathered rows,
  // attention.h); or, sliced, N × one slice's width, and the slices on disk.
  ChargedArray<float> gathered_;
  float* gathered_base_ = nullptr;  // its first 4 KiB boundary (kGatheredAlignFloats)
  ColumnSlices slices_;
  size_t gathered_width_ = 0;  // of the open GatheredPass
  GatheredPass gathered_pass_ = GatheredPass::kWrite;
  // outputs_[l]: layer l's output, N × out_l (activation and dropout applied for hidden
  // layers); the last is the logits.
  std::vector<ColumnSlices> outputs_;
  // The backward gradient that is not gathered, N × plan_.gradient_width: on an undirected
  // graph dP of the layers after the first and the first's slices before its last, on a
  // directed one G, GAT's dL/d(output).
  ColumnSlices gradient_;
  // SAGE: the self term H W_self forward, dL/d(output) backward (N × up to the widest output).
  ColumnSlices self_rows_;
  // GAT: each layer's [H W | el], per group of heads, and the backward pass's statistics (of
  // one group at a time) and each group's source gradients (attention.h).
  std::vector<std::vector<IntermediateRows>> transformed_;
  IntermediateRows attention_statistics_;
  std::vector<IntermediateRows> source_gradients_;
  // GAT in groups of heads: a chunk of a layer's full [H W | el] rows, split into the groups',
  // and backward the groups' dL/dWh assembled into full rows.
  ChargedArray<float> group_staging_;
  // One input group (InputGroupRows; sparse: its values, or ones when the plan holds the ids
  // alone), decoded or dropped out.
  ChargedArray<float> group_rows_;
  ChargedArray<float> span_gradient_;  // layer 0's dP, kFullGraphSpanRows of it
  std::unique_ptr<RowBlockSource> adjacency_;
  std::unique_ptr<RowBlockSource> features_;
  FullGraphPlan plan_;
  // outputs_ hold evaluation logits of the parameters with this hash.
  bool logits_hash_valid_ = false;
  uint64_t logits_hash_ = 0;
};

}  // namespace strata
