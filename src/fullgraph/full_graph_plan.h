// FullGraphPlan is where the full-graph runner keeps what, decided before anything is charged:
// the N-row intermediates in memory or row-blocked on disk, and the adjacency and the input
// features resident or streamed through RoBW buffers (AIRES §III; MaxMemory, §V, as the
// baseline). PlanFullGraph is a pure function of the dataset's meta, the options, the budget
// and what only the graph's files know, read in chunks before it (MeasureStreamExtents: sizes
// and longest rows from the offsets files, and whether the graph is symmetric), so plans are
// tested on hand-made shapes.
//
// Order of claims: what is held whatever the plan (the graph's and the features' row offsets,
// grouped, and an adjacency piece's expanded; GCN's or SAGE's
// normalisation, the labels, one input row group, the model, the optimizer and a best-epoch
// snapshot); the propagation input, N × the widest layer (GAT: the widest of its gathered
// rows, attention.h), resident, or when that cannot fit (or --full-graph-slices asks) as the
// widest column slices that fit (column_slices.h; GAT: the largest groups of heads, each
// gathering its own rows); the other
// intermediates (on an undirected graph GCN's and SAGE's gradient only as wide as the columns
// read back: dP of the later layers, and the first layer's slices before its last), on disk
// when memory cannot hold them beside that and one block of each stream, and always beside
// slices; then the adjacency resident if it fits beside one feature
// block (it is read 2 × layers times per epoch, 3 × layers for GAT, the features twice), then
// the features (sparse: their column ids and values, or the ids alone when every value is 1);
// the streams that are not resident share the rest as two buffers per file.
//
// Invariant: everything a plan places fits the budget; a budget that cannot hold the minimum is
// refused in one line naming the smallest budget that works.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "strata/dataset.h"
#include "strata/train.h"

namespace strata {

// Floats the propagation input is allocated beyond its rows, so that they can start on a 4 KiB
// boundary: a row of 16 columns is then one cache line, and a slice loaded from disk is read
// straight into it (direct I/O moves 4 KiB-aligned memory; IntermediateRows::Load).
inline constexpr uint64_t kGatheredAlignFloats = 1024;
// Input rows per input-dropout mask stream (and, dense, per weight-gradient sum).
inline constexpr uint64_t kFullGraphRowGroup = 128;
// Of a layer `width` columns wide cut in slices of `slice_width`, the columns before its last
// slice (0 when it is one slice): on an undirected graph the first layer's dP keeps those in
// row order, and its last slice goes straight into dW (full_graph_runner.h).
inline size_t ColumnsBeforeLastSlice(size_t width, size_t slice_width) {
  return (width - 1) / slice_width * slice_width;
}
// Rows of the first layer's dP propagated at a time beside the features on an undirected graph
// (full_graph_runner.h): enough edges per pass to share among threads, and a divisor of every
// chunk (a multiple of 1024 rows).
inline constexpr uint64_t kFullGraphSpanRows = 1024;
// Rows of the input the full-graph trainer hands its kernels at a time (an InputGroup, from a
// multiple of this, cut where the feature stream's blocks end). Sparse: a span, so that a
// pass over the features makes few parallel calls, each worth sharing (a call per 128 rows
// cost more in hand-overs on 16 threads than it saved); its sums are per row, so the size
// changes no value. Dense: a row group, whose GEMM sums the weight gradient one group at a time.
inline uint64_t InputGroupRows(bool sparse) {
  return sparse ? kFullGraphSpanRows : kFullGraphRowGroup;
}
// The end of the run of rows from `first` that stays inside both [first, end) and its cut of
// `size` rows (cuts start on multiples of size): the runner walks blocks in such runs, so that
// its groups, chunks and sums fall where no budget's blocks move them.
inline uint64_t RunEnd(uint64_t first, uint64_t end, uint64_t size) {
  return std::min(end, (first / size + 1) * size);
}

// What a plan needs from the graph's files, beyond the meta.
struct StreamExtents {
  // The largest direct-I/O span (AlignedSpan) of one node's in-neighbour ids.
  uint64_t adjacency_row_span = 0;
  // Sparse features: of a group of kFullGraphRowGroup rows, the largest span of its column ids
  // (its values' is the same); of an input group (InputGroupRows), the most nonzeros.
  uint64_t feature_group_span = 0;
  uint64_t feature_group_nonzeros = 0;
  // The most entries of one row: a node's in-neighbours, and a sparse feature row's nonzeros
  // (they size GroupedRowOffsets' lengths; the default, at least 2^16, takes 4 bytes a row).
  uint64_t adjacency_longest_row = uint64_t{1} << 32;
  uint64_t feature_longest_row = uint64_t{1} << 32;
  // Every stored edge j -> i has its reverse (an undirected graph).
  bool symmetric = false;
  // Sparse features whose stored values are all 1 (binary bag-of-words): their column ids say
  // everything, and the values file is never read.
  bool unit_values = false;
};

struct FullGraphPlan {
  // The propagation input in `slices` column slices of slice_width columns (the last may be
  // narrower), one resident at a time; one slice: resident whole. GAT: its concatenated layers
  // in `slices` groups of heads_per_slice heads (the last may have fewer), each gathering
  // slice_width columns at most.
  size_t slices = 1;
  size_t slice_width = 0;
  size_t heads_per_slice = 0;
  // Columns of the gradient kept in row order (0: none): on an undirected graph GCN and SAGE
  // keep only dP of the layers after the first and the first's slices before its last.
  size_t gradient_width = 0;
  // The layers' outputs and the streamed gradient are in scratch files (row-blocked on disk).
  bool intermediates_on_disk = false;
  bool adjacency_resident = false;
  bool features_resident = false;
  // A stream that is not resident: the bytes of each of its buffers, per file, and with
  // MaxMemory the bytes of the prefix it reads once and keeps, per file (0 otherwise).
  uint64_t adjacency_buffer_bytes = 0;
  uint64_t adjacency_prefix_bytes = 0;
  uint64_t feature_buffer_bytes = 0;
  uint64_t feature_prefix_bytes = 0;
  // The input group's scratch (InputGroupRows): a decoded dense group, or a sparse one's values.
  uint64_t input_group_floats = 0;
  // Sparse features stream (or hold) their column ids alone, their values being all 1
  // (StreamExtents::unit_values): the group's values are ones in the scratch.
  bool unit_values = false;

  // The graph is undirected (StreamExtents::symmetric): Âᵀ = Â, and the backward pass
  // propagates with the row-parallel gather instead of the scatter.
  bool symmetric = false;
  // The longest rows the row offsets were charged for (StreamExtents): the runner's
  // GroupedRowOffsets hold their lengths in as many bytes.
  uint64_t adjacency_longest_row = 0;
  uint64_t feature_longest_row = 0;

  // Known once the streams are open; set by the runner, not by PlanFullGraph.
  uint64_t adjacency_blocks = 1;
  uint64_t feature_blocks = 1;
};

// One layer of the full-graph model: GCN and SAGE layers have one "head" of `out` features; a
// GAT layer has `heads` of per_head, concatenated (hidden layers) or averaged (the last).
struct FullGraphLayerShape {
  size_t in = 0;
  size_t heads = 1;
  size_t per_head = 0;
  size_t out = 0;
  bool concat = true;
};

// The shapes of `model`'s layers, in order.
std::vector<FullGraphLayerShape> FullGraphLayers(const ModelOptions& model, size_t feature_dim,
                                                 size_t num_classes);

// Labels fit 16 bits (the runner keeps them so) when the class ids do.
inline bool NarrowLabels(uint64_t num_classes) { return num_classes <= 32767; }

// Throws an input error naming the option when `options` cannot describe a full-graph run:
// --multistage, --max-batches, or chunk rows that are not a positive multiple of 1024. (The
// model's own rules are CheckModelOptions', nn/model.h.)
void CheckFullGraphOptions(const TrainOptions& options);

// Reads the dataset's offsets files, the adjacency for its symmetry and sparse features' values
// (whether all are 1), in chunks (nothing is held), for the extents of its streams.
StreamExtents MeasureStreamExtents(const Dataset& dataset);

// The plan for `meta`'s dataset under `options` (which CheckModelOptions and
// CheckFullGraphOptions accept) in a budget of budget_bytes, or an input error naming the
// smallest budget that works when it cannot hold the model, the propagation input (at its
// smallest slice), the other intermediates at their smallest and one block of each stream; or
// naming --full-graph-slices when it asks for more slices than the widest layer has columns
// (GAT: than a layer has heads).
FullGraphPlan PlanFullGraph(const DatasetMeta& meta, const TrainOptions& options,
                            const StreamExtents& extents, uint64_t budget_bytes);

}  // namespace strata
