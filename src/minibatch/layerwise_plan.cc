#include "minibatch/layerwise_plan.h"

#include <algorithm>
#include <limits>

#include "fullgraph/intermediate_rows.h"

namespace strata {
namespace {

constexpr uint64_t kChunkBytes = uint64_t{8} << 20;  // an activation chunk on disk, about

}  // namespace

uint64_t ChunkRows(size_t width, const LayerwiseOptions& options) {
  // float16 chunks must fill whole 4 KiB units too.
  const uint64_t unit = options.half_on_disk && width % 2 != 0 ? 2048 : 1024;
  if (options.chunk_rows > 0) return (options.chunk_rows + unit - 1) / unit * unit;
  return std::max<uint64_t>(unit, kChunkBytes / (width * sizeof(float)) / unit * unit);
}

uint64_t LayerPlan::SumBytes() const {
  const uint64_t own =
      self > 0 && !RereadsOwnRows() ? in * (half_input ? sizeof(uint16_t) : sizeof(float)) : 0;
  return in * sizeof(float) + own + sizeof(uint64_t);
}

uint64_t LayerPlan::RowsBytes(uint64_t rows, size_t width, bool on_disk) const {
  return on_disk ? IntermediateRows::OnDiskBytes(rows, width, chunk_rows)
                 : IntermediateRows::ResidentBytes(rows, width);
}

uint64_t LayerPlan::InputBytes(bool on_disk, const LayerPlan* previous) const {
  return previous != nullptr ? previous->RowsBytes(previous->destinations, previous->out, on_disk)
                             : kFeatureGroups * kGroupRows * in * sizeof(float);
}

uint64_t LayerPlan::TransformedPeakBytes(bool on_disk, const LayerPlan* previous) const {
  const uint64_t self_rows = self > 0 ? RowsBytes(destinations, self, on_disk) : 0;
  const uint64_t own = self > 0 ? kGroupRows * in * sizeof(float) : 0;
  const uint64_t transform = InputBytes(on_disk, previous) + TransformedBytes() + self_rows + own;
  const uint64_t aggregate = TransformedBytes() + self_rows + RowsBytes(destinations, out, on_disk);
  return std::max(transform, aggregate);
}

uint64_t LayerPlan::InputFirstFixedBytes(bool on_disk, const LayerPlan* previous) const {
  return InputBytes(on_disk, previous) + RowsBytes(destinations, out, on_disk) + GroupIndexBytes() +
         (ChunkOwnRows() ? kGroupRows * in * sizeof(float) : 0);
}

void LayerPlan::PlanRanges(uint64_t bytes, uint64_t max_rows) {
  const uint64_t mean_degree = destinations > 0 ? (edges + destinations - 1) / destinations : 0;
  const uint64_t for_sums = bytes > 8 * max_degree ? bytes - 8 * max_degree : 0;
  range_rows = std::clamp<uint64_t>(
      std::min(bytes / (SumBytes() + 8 * mean_degree), for_sums / SumBytes()), 1, destinations);
  if (max_rows > 0) range_rows = std::min(range_rows, max_rows);
  const uint64_t left = bytes > range_rows * SumBytes() ? bytes - range_rows * SumBytes() : 0;
  range_edges = std::min(edges, std::max(max_degree, left / 8));
}

LayerwisePlan::LayerwisePlan(const CscGraph& graph, std::span<const LayerSpec> specs,
                             const std::vector<NodeSet>& sets, const LayerwiseOptions& options,
                             bool features_half)
    : options_(options), features_half_(features_half) {
  if (sets.empty()) return;
  const size_t count = specs.size();
  for (size_t l = 0; l < count; ++l) {
    const LayerSpec& spec = specs[l];
    LayerPlan p;
    p.sources = sets[count - l].size();
    p.destinations = sets[count - 1 - l].size();
    p.in = spec.in;
    p.gathered = spec.gathered_width();
    p.self = spec.self_width();
    p.out = spec.out_dim();
    p.chunk_rows = ChunkRows(p.out, options);
    p.reads_features = l == 0;
    p.gcn = spec.kind == ModelKind::kGcn;
    p.aggregates_inputs = spec.aggregates_inputs();
    const NodeSet& destinations = sets[count - 1 - l];
    destinations.ForEach(0, destinations.num_nodes(), [&](uint64_t v) {
      p.edges += graph.InDegree(v);
      p.max_degree = std::max(p.max_degree, graph.InDegree(v));
    });
    layers_.push_back(p);
  }
}

uint64_t LayerwisePlan::TransformedPeakBytes(bool on_disk) const {
  if (layers_.empty()) return 0;
  uint64_t peak = 0;
  for (size_t l = 0; l < layers(); ++l) {
    peak =
        std::max(peak, layers_[l].TransformedPeakBytes(on_disk, l > 0 ? &layers_[l - 1] : nullptr));
  }
  return peak + kLayerwiseSlackBytes;
}

uint64_t LayerwisePlan::PlanLayers(uint64_t available, bool on_disk, bool input_first) {
  uint64_t peak = 0;
  for (size_t l = 0; l < layers(); ++l) {
    LayerPlan& p = layers_[l];
    const LayerPlan* previous = l > 0 ? &layers_[l - 1] : nullptr;
    p.range_rows = p.range_edges = 0;
    p.half_input = previous == nullptr ? features_half_ : options_.half_on_disk && on_disk;
    const uint64_t held = p.TransformedPeakBytes(on_disk, previous) + kLayerwiseSlackBytes;
    if (input_first && p.aggregates_inputs && (options_.input_first || held > available)) {
      const uint64_t fixed = p.InputFirstFixedBytes(on_disk, previous) + kLayerwiseSlackBytes;
      p.PlanRanges(available > fixed ? available - fixed : 0, options_.max_range_rows);
    }
    peak = std::max(peak, p.PeakBytes(on_disk, previous) + kLayerwiseSlackBytes);
  }
  return peak;
}

uint64_t LayerwisePlan::FitMode(uint64_t available, bool input_first) {
  activations_on_disk_ = false;
  const uint64_t needed = PlanLayers(available, false, input_first);
  if (needed <= available) return needed;
  const uint64_t on_disk = PlanLayers(available, true, input_first);
  activations_on_disk_ = on_disk < needed;
  return activations_on_disk_ ? on_disk : PlanLayers(available, false, input_first);
}

uint64_t LayerwisePlan::Fit(uint64_t available) {
  activations_on_disk_ = false;
  if (layers_.empty()) return 0;
  // Transformed rows held if that fits, else input-first ranges; where neither fits, the plan
  // that comes closer, so that Fit(0) is the least any plan needs.
  uint64_t closest = std::numeric_limits<uint64_t>::max();
  bool closest_input_first = true;
  for (bool input_first : {false, true}) {
    if (options_.input_first && !input_first) continue;
    const uint64_t needed = FitMode(available, input_first);
    if (needed <= available) return needed;
    if (needed < closest) {
      closest = needed;
      closest_input_first = input_first;
    }
  }
  return closest_input_first ? closest : FitMode(available, false);
}

uint64_t LayerwisePlan::LeastBytes() const {
  LayerwisePlan least = *this;
  return least.Fit(0);
}

}  // namespace strata
