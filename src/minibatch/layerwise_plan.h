// LayerwisePlan is what layer-wise inference (minibatch/layerwise_inference.h) of a set of nodes
// holds at once, worked out before it runs from the sizes of the set's in-neighbourhood closure
// and the model's widths alone: per layer, whether its transformed rows are held or it runs
// input-first in ranges of destinations, and whether the activations stay in memory or go to
// scratch files. Fit sizes it to a budget; the run follows what Fit chose. Training sizes its
// evaluation with it before the model exists, so the budget it refuses names what evaluation
// needs too.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "minibatch/node_set.h"
#include "nn/layer_spec.h"
#include "strata/graph.h"

namespace strata {

inline constexpr uint64_t kGroupRows = 1024;          // input rows transformed at once
inline constexpr uint64_t kFeatureGroups = 8;         // groups of feature reads queued at once
inline constexpr uint64_t kBlockDestinations = 4096;  // destinations aggregated at once, at most

// What a run leaves unplanned beside its buffers: a block's edge lists and the layer's per-edge
// buffers (GAT's attention), which the model's charge follows.
inline constexpr uint64_t kLayerwiseSlackBytes = uint64_t{16} << 20;

struct LayerwiseOptions {
  // Rows per chunk of an activation on disk, a multiple of 1024; 0: about 8 MiB of rows.
  uint64_t chunk_rows = 0;
  std::string scratch_dir;  // where activations go on disk; empty: $TMPDIR, else /tmp
  // Input-first layers: destinations per pass at most; 0: as many as the budget holds.
  uint64_t max_range_rows = 0;
  bool input_first = false;   // every SAGE and GCN layer input-first, whatever the budget holds
  bool half_on_disk = false;  // activations in scratch files as float16 (IntermediateRows)
};

// The shapes of one layer and what its two passes hold.
struct LayerPlan {
  uint64_t sources = 0;                            // input rows it transforms
  uint64_t destinations = 0;                       // nodes whose output it computes
  size_t in = 0, gathered = 0, self = 0, out = 0;  // widths (nn/layer.h)
  uint64_t chunk_rows = 0;                         // of its activations and self terms on disk
  bool reads_features = false;
  bool gcn = false;
  bool aggregates_inputs = false;  // SAGE, GCN: can run input-first
  uint64_t edges = 0;              // the destinations' in-edges
  uint64_t max_degree = 0;         // of a destination
  // Input-first: each pass's destinations and their edges, at most; 0: transformed rows held.
  uint64_t range_rows = 0;
  uint64_t range_edges = 0;
  // The input's values are float16 values (float16 features as read, activations back from a
  // float16 scratch file): input-first holds SAGE's own rows as float16, losing nothing.
  bool half_input = false;

  // The input layer's input-first ranges read their own rows (SAGE's self term) from the
  // feature store again, kGroupRows at a time, after their pass: a share of one more
  // pass over the features, where holding them through the pass would take a third more room
  // per destination and so a third more passes.
  bool RereadsOwnRows() const { return self > 0 && reads_features; }
  // Own rows go through kGroupRows float32 rows at a time: read again, or widened from float16.
  bool ChunkOwnRows() const { return self > 0 && (reads_features || half_input); }
  // An input-first range's sums, own rows (SAGE, unless read again) and ids, per destination.
  uint64_t SumBytes() const;
  uint64_t RangeBytes() const { return range_rows * SumBytes() + range_edges * 8; }
  // The first edge of each group of kGroupRows sources, per range.
  uint64_t GroupIndexBytes() const { return (sources / kGroupRows + 2) * sizeof(uint64_t); }
  // The transformed rows, after kBlockDestinations rows that hold a block's destinations (and,
  // for GCN, the normalisation of each).
  uint64_t TransformedBytes() const {
    return (kBlockDestinations + sources) * (gathered + (gcn ? 1 : 0)) * sizeof(float);
  }
  uint64_t RowsBytes(uint64_t rows, size_t width, bool on_disk) const;
  // What streaming the input holds: the feature reads in flight, or the previous layer's
  // activations.
  uint64_t InputBytes(bool on_disk, const LayerPlan* previous) const;
  // The most its passes charge at once with the transformed rows held.
  uint64_t TransformedPeakBytes(bool on_disk, const LayerPlan* previous) const;
  // Input-first: all but the range (and a piece of own rows as float32).
  uint64_t InputFirstFixedBytes(bool on_disk, const LayerPlan* previous) const;
  // Sizes the ranges to `bytes` (at least one destination with its edges), and to at most
  // max_rows destinations when that is non-zero. A range keeps room for the edges of the
  // largest destination, so that ranges sized to a budget never need more than it.
  void PlanRanges(uint64_t bytes, uint64_t max_rows);
  uint64_t PeakBytes(bool on_disk, const LayerPlan* previous) const {
    return range_rows > 0 ? InputFirstFixedBytes(on_disk, previous) + RangeBytes()
                          : TransformedPeakBytes(on_disk, previous);
  }
};

class LayerwisePlan {
 public:
  // sets[k], k = 0..specs.size(): the nodes within k in-hops of the evaluated ones (no sets:
  // nothing to evaluate, a plan of no layers). features_half: the input layer reads float16
  // values as stored.
  LayerwisePlan(const CscGraph& graph, std::span<const LayerSpec> specs,
                const std::vector<NodeSet>& sets, const LayerwiseOptions& options,
                bool features_half);

  // Plans the run for `available` bytes, transformed rows held before input-first ranges and
  // activations in memory before scratch files, and returns the most it then charges at once:
  // more than `available` when no plan fits.
  uint64_t Fit(uint64_t available);
  // The least any plan charges at once: what Fit(0) returns.
  uint64_t LeastBytes() const;
  // The peak with every layer's transformed rows held, activations in memory or on disk.
  uint64_t TransformedPeakBytes(bool on_disk) const;

  size_t layers() const { return layers_.size(); }
  const LayerPlan& layer(size_t l) const { return layers_[l]; }
  bool activations_on_disk() const { return activations_on_disk_; }

 private:
  // Plans with input_first as PlanLayers does, activations in memory before scratch files.
  uint64_t FitMode(uint64_t available, bool input_first);
  // The peak with activations on disk or not, and, if input_first, a SAGE or GCN layer whose
  // transformed rows do not fit `available` running input-first with ranges the rest holds.
  uint64_t PlanLayers(uint64_t available, bool on_disk, bool input_first);

  std::vector<LayerPlan> layers_;
  LayerwiseOptions options_;
  bool features_half_ = false;
  bool activations_on_disk_ = false;
};

// Rows per chunk of an activation `width` values wide on disk.
uint64_t ChunkRows(size_t width, const LayerwiseOptions& options);

}  // namespace strata
