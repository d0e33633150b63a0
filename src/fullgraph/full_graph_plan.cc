#include "fullgraph/full_graph_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/random.h"
#include "dataset/stored_ids.h"
#include "fullgraph/column_slices.h"
#include "fullgraph/grouped_row_offsets.h"
#include "fullgraph/intermediate_rows.h"
#include "fullgraph/row_blocks.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/io_engine.h"

namespace strata {
namespace {

// Room left unplanned for small allocations (vectors, the optimizer's bookkeeping).
constexpr uint64_t kSlackBytes = uint64_t{1} << 20;
// Entries per read of the scans below (offsets, ids, values): their buffers, about 1 MiB at
// most, are not charged, being freed before the plan charges anything, and stay small beside
// the smallest budgets. A multiple of every group size scanned.
constexpr uint64_t kScanChunk = uint64_t{1} << 16;
static_assert(kScanChunk % kFullGraphSpanRows == 0 && kFullGraphSpanRows % kFullGraphRowGroup == 0);

// The AlignedSpan of a whole file of `bytes`, read from its start.
uint64_t WholeFileSpan(uint64_t bytes) {
  return (bytes + kDirectIoAlignment - 1) / kDirectIoAlignment * kDirectIoAlignment;
}

struct GroupExtent {
  uint64_t largest_span = 0;     // AlignedSpan of a group's entries
  uint64_t largest_entries = 0;  // entries of a batch
  uint64_t longest_row = 0;      // entries of a row
};

// One pass over an offsets file (N + 1 uint64, read in chunks): for groups of `group` rows,
// whose entries are `entry_bytes` each, the largest direct-I/O span; for batches of `batch`
// rows (a multiple of `group`, from a multiple of it), the most entries; and the longest row.
GroupExtent ScanGroups(const std::string& path, uint64_t n, uint64_t group, uint64_t batch,
                       uint64_t entry_bytes) {
  FileReader file(path);
  std::vector<uint64_t> offsets;
  GroupExtent extent;
  for (uint64_t base = 0; base < n; base += kScanChunk) {
    const uint64_t rows = std::min(kScanChunk, n - base);
    offsets.resize(rows + 1);
    file.ReadExact(base * 8, offsets.data(), (rows + 1) * 8);
    const RowOffset offset_of = [&](uint64_t row) { return offsets[row - base] * entry_bytes; };
    for (uint64_t i = 0; i < rows; ++i) {
      extent.longest_row = std::max(extent.longest_row, offsets[i + 1] - offsets[i]);
    }
    for (uint64_t first = base; first < base + rows; first += group) {
      const uint64_t end = std::min(base + rows, first + group);
      extent.largest_span = std::max(extent.largest_span, AlignedSpan(offset_of, first, end));
    }
    for (uint64_t first = base; first < base + rows; first += batch) {
      const uint64_t end = std::min(base + rows, first + batch);
      extent.largest_entries =
          std::max(extent.largest_entries, offsets[end - base] - offsets[first - base]);
    }
  }
  return extent;
}

// Whether the edges, as a multiset, equal their reverses: exactly when the sums of a strong
// hash of (source, destination) and of (destination, source) over them agree (a false
// "symmetric" needs a 64-bit collision). One pass over the offsets and the ids, in chunks.
bool GraphIsSymmetric(const Dataset& dataset) {
  const uint64_t n = dataset.meta().num_nodes;
  const uint32_t id_bytes = dataset.meta().node_id_bytes;
  FileReader offsets_file(dataset.PathOf(kIndptrFile));
  FileReader ids_file(dataset.PathOf(kIndicesFile));
  std::vector<uint64_t> offsets;
  std::vector<std::byte> ids(std::min(kScanChunk, dataset.meta().num_edges) * id_bytes);
  uint64_t ids_begin = 0, ids_end = 0;  // the edges in `ids`
  uint64_t forward = 0, reverse = 0;
  auto hash = [](uint64_t a, uint64_t b) { return MixSeed(MixSeed(0x5eed, a), b); };
  for (uint64_t base = 0; base < n; base += kScanChunk) {
    const uint64_t rows = std::min(kScanChunk, n - base);
    offsets.resize(rows + 1);
    offsets_file.ReadExact(base * 8, offsets.data(), (rows + 1) * 8);
    // Checked here, before the runner reads them whole: the ids are read where they point.
    CheckRowOffsets(offsets, base, n, dataset.meta().num_edges, dataset.PathOf(kIndptrFile));
    for (uint64_t i = base; i < base + rows; ++i) {
      for (uint64_t e = offsets[i - base]; e < offsets[i - base + 1]; ++e) {
        if (e >= ids_end) {
          const uint64_t count = std::min(kScanChunk, offsets[rows] - e);
          ids_file.ReadExact(e * id_bytes, ids.data(), count * id_bytes);
          ids_begin = e;
          ids_end = e + count;
        }
        const uint64_t j =
            CheckedStoredId(LoadNodeId(ids.data() + (e - ids_begin) * id_bytes, id_bytes), e, n,
                            dataset.PathOf(kIndicesFile));
        forward += hash(j, i);
        reverse += hash(i, j);
      }
    }
  }
  return forward == reverse;
}

// Whether each of the `count` floats of `path` is 1, read in chunks: a binary bag-of-words's
// values, which then need not be read at all.
bool ValuesAreOnes(const std::string& path, uint64_t count) {
  FileReader file(path);
  std::vector<float> values(std::min(kScanChunk, count));
  for (uint64_t first = 0; first < count; first += kScanChunk) {
    const uint64_t n = std::min(kScanChunk, count - first);
    file.ReadExact(first * sizeof(float), values.data(), n * sizeof(float));
    if (!std::all_of(values.begin(), values.begin() + n, [](float v) { return v == 1.0f; })) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::vector<FullGraphLayerShape> FullGraphLayers(const ModelOptions& model, size_t feature_dim,
                                                 size_t num_classes) {
  std::vector<FullGraphLayerShape> layers;
  for (size_t l = 0, in = feature_dim; l < model.layers; ++l) {
    const bool last = l + 1 == model.layers;
    FullGraphLayerShape shape;
    shape.in = in;
    shape.per_head = last ? num_classes : model.hidden;
    if (model.kind == ModelKind::kGat) {
      shape.heads = last ? model.out_heads : model.heads;
      shape.concat = !last;
    }
    shape.out = shape.concat ? shape.heads * shape.per_head : shape.per_head;
    layers.push_back(shape);
    in = shape.out;
  }
  return layers;
}

void CheckFullGraphOptions(const TrainOptions& o) {
  if (o.multistage.enabled()) {
    throw Error::Input("--full-graph and --multistage exclude each other");
  }
  if (o.max_batches > 0) throw Error::Input("--max-batches needs mini-batches, not --full-graph");
  if (o.full_graph_chunk_rows == 0 || o.full_graph_chunk_rows % 1024 != 0) {
    throw Error::Input("--full-graph-chunk-rows must be a positive multiple of 1024");
  }
}

StreamExtents MeasureStreamExtents(const Dataset& dataset) {
  const DatasetMeta& meta = dataset.meta();
  StreamExtents extents;
  // First: it checks the graph's offsets, which the sizes below follow.
  extents.symmetric = GraphIsSymmetric(dataset);
  const GroupExtent rows =
      ScanGroups(dataset.PathOf(kIndptrFile), meta.num_nodes, 1, 1, meta.node_id_bytes);
  extents.adjacency_row_span = rows.largest_span;
  extents.adjacency_longest_row = rows.longest_row;
  if (meta.sparse_features) {
    const GroupExtent groups = ScanGroups(dataset.PathOf(kSparseIndptrFile), meta.num_nodes,
                                          kFullGraphRowGroup, InputGroupRows(true), 4);
    extents.feature_group_span = groups.largest_span;
    extents.feature_group_nonzeros = groups.largest_entries;
    extents.feature_longest_row = groups.longest_row;
    extents.unit_values = ValuesAreOnes(dataset.PathOf(kSparseValuesFile), meta.feature_nnz);
  }
  return extents;
}

FullGraphPlan PlanFullGraph(const DatasetMeta& meta, const TrainOptions& o,
                            const StreamExtents& extents, uint64_t budget_bytes) {
  const ModelOptions& model = o.model;
  const uint64_t n = meta.num_nodes;
  const uint64_t chunk_rows = o.full_graph_chunk_rows;
  // The layers' outputs, the gradient in row order (its width below) and SAGE's self terms (as
  // wide as the widest output), in memory or as chunk buffers: column slices of the
  // propagation's slice width (column_slices.h), one chunk of full rows more for each with
  // several slices. SAGE's weights are W_self and W_neigh.
  const bool sage = model.kind == ModelKind::kSage;
  const bool gat = model.kind == ModelKind::kGat;
  const std::vector<FullGraphLayerShape> layers =
      FullGraphLayers(model, meta.feature_dim, meta.num_classes);
  size_t widest = 0, gat_heads = 0;
  uint64_t parameter_floats = 0;
  for (const FullGraphLayerShape& layer : layers) {
    widest = std::max(widest, layer.out);
    const uint64_t bias = model.bias ? layer.out : 0;
    const size_t width = layer.heads * layer.per_head;
    if (gat) {
      parameter_floats += (layer.in + 2) * width + bias;
      if (layer.concat) gat_heads = std::max(gat_heads, layer.heads);
    } else {
      parameter_floats += (sage ? 2 : 1) * layer.in * layer.out + bias;
    }
  }
  // What a candidate cut costs: GCN and SAGE cut the propagation input into column slices of
  // `cut` columns; GAT runs its concatenated layers in groups of `cut` heads (attention.h),
  // each group gathering only its own rows, and keeps per group its transformed rows and
  // source gradients, its outputs in column slices of a group's columns; an averaged layer is
  // never cut. GAT gathers the widest of its gradient rows on an undirected graph, and on a
  // directed one its transformed rows beside the scatter's sums (as wide).
  struct Layout {
    size_t gather = 0;  // columns gathered per pass
    size_t slices = 1;
    size_t gradient = 0;                  // columns of the gradient that is not gathered
    uint64_t in_memory = 0, on_disk = 0;  // the other intermediates, either way
    uint64_t held = 0;  // beside them whatever the plan: the gather's own slices, staging
  };
  auto rows = [&](Layout& layout, size_t width) {
    layout.in_memory += IntermediateRows::ResidentBytes(n, width);
    layout.on_disk += IntermediateRows::OnDiskBytes(n, width, chunk_rows);
  };
  auto sliced_rows = [&](Layout& layout, size_t width, size_t slice_width) {
    layout.in_memory += IntermediateRows::ResidentBytes(n, width);
    layout.on_disk += ColumnSlices::ChargedBytes(n, width, slice_width, chunk_rows);
  };
  auto gat_layout = [&](size_t cut) {
    Layout layout;
    size_t statistics = 0, source = 0, staged = 0;
    for (const FullGraphLayerShape& layer : layers) {
      const size_t group = layer.concat ? std::min(cut, layer.heads) : layer.heads;
      const size_t f = layer.per_head;
      layout.gather =
          std::max(layout.gather, extents.symmetric ? group * (f + 4) : 2 * group * (f + 1));
      layout.slices = std::max(layout.slices, (layer.heads + group - 1) / group);
      sliced_rows(layout, layer.out, layer.concat ? group * f : layer.out);
      for (size_t first = 0; first < layer.heads; first += group) {
        rows(layout, std::min(group, layer.heads - first) * (f + 1));
      }
      statistics = std::max(statistics, 4 * group);
      source = std::max(source, group * (f + 2));
      staged = std::max(staged, layer.heads * (f + 1));
    }
    layout.gradient = widest;
    sliced_rows(layout, widest, widest);
    rows(layout, statistics);
    for (size_t g = 0; g < layout.slices; ++g) rows(layout, source);
    // Grouped, a chunk of full transformed rows is staged, and the source rows assembled.
    if (layout.slices > 1) layout.held = 4 * std::min(n, chunk_rows) * staged;
    return layout;
  };
  auto sliced_layout = [&](size_t cut) {
    Layout layout;
    layout.gather = cut;
    layout.slices = (widest + cut - 1) / cut;
    for (const FullGraphLayerShape& layer : layers) sliced_rows(layout, layer.out, cut);
    // The gradient in row order: on a directed graph G, of any layer; on an undirected one dP
    // of the layers after the first, and of the first only the slices before its last (whose
    // rows go straight into dW, full_graph_runner.h).
    layout.gradient = extents.symmetric ? ColumnsBeforeLastSlice(layers[0].out, cut) : widest;
    for (size_t l = 1; l < layers.size(); ++l) {
      layout.gradient = std::max(layout.gradient, layers[l].out);
    }
    if (layout.gradient > 0) sliced_rows(layout, layout.gradient, cut);
    if (sage) sliced_rows(layout, widest, cut);
    if (cut < widest) layout.held = ColumnSlices::ChargedBytes(n, widest, cut, chunk_rows);
    return layout;
  };
  auto layout_of = [&](size_t cut) { return gat ? gat_layout(cut) : sliced_layout(cut); };
  // What is cut: GAT's heads, or the propagation input's columns.
  const size_t whole = gat ? std::max<size_t>(gat_heads, 1) : widest;

  // The streams whole, and at their smallest: two buffers of the largest row (adjacency) or
  // row group (features) per file.
  FullGraphPlan plan;
  plan.symmetric = extents.symmetric;
  const bool sparse = meta.sparse_features;
  plan.unit_values = sparse && extents.unit_values;
  plan.adjacency_longest_row = extents.adjacency_longest_row;
  plan.feature_longest_row = extents.feature_longest_row;
  // A sparse row's column ids and values (the ids alone when the values are all 1).
  const uint64_t files = sparse && !plan.unit_values ? 2 : 1;
  const uint64_t adjacency_bytes = WholeFileSpan(meta.num_edges * meta.node_id_bytes);
  const uint64_t adjacency_min = 2 * extents.adjacency_row_span;
  uint64_t feature_bytes = 0, features_min = 0;
  if (sparse) {
    feature_bytes = files * WholeFileSpan(meta.feature_nnz * 4);
    features_min = 2 * files * extents.feature_group_span;
    plan.input_group_floats = extents.feature_group_nonzeros;
  } else {
    const uint64_t stride = meta.row_stride_bytes;
    feature_bytes = WholeFileSpan(n * stride);
    features_min = 2 * LargestGroupSpan(n, kFullGraphRowGroup,
                                        [stride](uint64_t row) { return row * stride; });
    plan.input_group_floats = InputGroupRows(false) * meta.feature_dim;
  }
  const uint64_t streams_min = adjacency_min + features_min;

  // Charged whatever the plan: the graph's and the sparse features' row offsets (grouped, and
  // a piece of the adjacency's, up to a chunk's rows, as the kernels read them), the GCN
  // normalisation (SAGE: the inverse in-degrees), the labels (16 bits when the classes allow), a
  // byte of split membership per node, one chunk's labels and the input row group, and on an
  // undirected graph (but for GAT) a span of the first layer's dP. Held but not charged: values,
  // gradients, Adam's two moments and the best-epoch snapshot of the parameters, and the slack.
  const uint64_t charged_rest =
      GroupedRowOffsets::ChargedBytes(n, kFullGraphRowGroup, extents.adjacency_longest_row) +
      8 * (std::min(n, chunk_rows) + 1) +
      (sparse ? GroupedRowOffsets::ChargedBytes(n, kFullGraphRowGroup, extents.feature_longest_row)
              : 0) +
      (gat ? 0 : 4 * n) + (NarrowLabels(meta.num_classes) ? 2 : 4) * n + n +
      4 * std::min(n, chunk_rows) + 4 * plan.input_group_floats +
      (!gat && extents.symmetric ? 4 * std::min(n, kFullGraphSpanRows) * layers[0].out : 0);
  const uint64_t fixed_rest = charged_rest + 5 * 4 * parameter_floats + kSlackBytes;
  // The propagation input, N × the columns gathered per pass, resident; the other
  // intermediates in memory, or on disk (always when cut).
  auto gather_bytes = [&](const Layout& layout) {
    return 4 * (n * layout.gather + kGatheredAlignFloats) + layout.held;
  };
  auto needed = [&](size_t cut) {
    const Layout layout = layout_of(cut);
    const bool on_disk_rows = layout.slices > 1 || layout.on_disk < layout.in_memory;
    return fixed_rest + gather_bytes(layout) + (on_disk_rows ? layout.on_disk : layout.in_memory) +
           streams_min;
  };
  const size_t forced = o.full_graph_slices;
  if (forced > whole) {
    throw Error::Input(
        gat ? fmt::format("--full-graph-slices {} exceeds GAT's {} heads a layer", forced, whole)
            : fmt::format("--full-graph-slices {} exceeds the widest layer's {} "
                          "columns",
                          forced, whole));
  }
  // --full-graph-slices S cuts as evenly as it can (slices of ceil(width / S) columns, or
  // groups of ceil(heads / S) heads). Else whole when it fits (each slice or group is a pass
  // over the adjacency), or the widest cut that fits: for GCN and SAGE among multiples of 16
  // columns and powers of two below 16, so that each row fills whole 64-byte cache lines or
  // shares one with no other row; for GAT among group sizes.
  size_t cut = forced > 0 ? (whole + forced - 1) / forced : whole;
  std::vector<size_t> candidates;
  if (gat) {
    for (size_t heads = whole - 1; heads >= 1; --heads) candidates.push_back(heads);
  } else {
    for (size_t w = (whole - 1) / 16 * 16; w >= 16; w -= 16) candidates.push_back(w);
    for (size_t w = 8; w >= 1; w /= 2) {
      if (w < whole) candidates.push_back(w);
    }
  }
  if (forced == 0 && needed(cut) > budget_bytes) {
    for (size_t c : candidates) {
      cut = c;
      if (needed(c) <= budget_bytes) break;
    }
  }
  const Layout layout = layout_of(cut);
  plan.slice_width = layout.gather;
  plan.slices = layout.slices;
  plan.gradient_width = layout.gradient;
  plan.heads_per_slice = gat ? cut : 0;
  const uint64_t fixed = fixed_rest + gather_bytes(layout);
  const uint64_t charged = charged_rest + gather_bytes(layout);
  plan.intermediates_on_disk =
      plan.slices > 1 ||
      (fixed + layout.in_memory + streams_min > budget_bytes && layout.on_disk < layout.in_memory);
  const uint64_t intermediates = plan.intermediates_on_disk ? layout.on_disk : layout.in_memory;
  if (fixed + intermediates + streams_min > budget_bytes) {
    uint64_t smallest = needed(forced > 0 ? cut : whole);
    if (forced == 0) {
      for (size_t c : candidates) smallest = std::min(smallest, needed(c));
    }
    throw Error::Input(fmt::format(
        "--memory-budget {} cannot hold the full graph's propagation input and model ({}), its "
        "other intermediates as row blocks ({}) and one block of the adjacency and of the "
        "features ({}); the smallest budget that works is {}",
        FormatBytes(budget_bytes), FormatBytes(fixed), FormatBytes(intermediates),
        FormatBytes(streams_min), FormatBytesRoundedUp(smallest)));
  }

  // What the streams get: the budget less what is charged, the slack and a copy of the
  // parameters (the best-epoch snapshot, taken after the streams are open).
  const uint64_t held = charged + intermediates + kSlackBytes + 4 * parameter_floats;
  const uint64_t left = budget_bytes > held ? budget_bytes - held : 0;
  if (o.full_graph_max_memory) {
    // Equal shares for the adjacency and the features, each a resident prefix and one small
    // buffer through which the rest is read, in order, while nothing else runs.
    const uint64_t share = left / 2;
    plan.adjacency_buffer_bytes = std::clamp(share / 8, adjacency_min / 2, adjacency_bytes);
    plan.adjacency_prefix_bytes = share - std::min(share, plan.adjacency_buffer_bytes);
    plan.feature_buffer_bytes =
        std::clamp(share / (8 * files), features_min / (2 * files), feature_bytes / files);
    const uint64_t per_file = share / files;
    plan.feature_prefix_bytes = per_file - std::min(per_file, plan.feature_buffer_bytes);
    return plan;
  }
  plan.adjacency_resident = adjacency_bytes + features_min <= left;
  plan.features_resident =
      (plan.adjacency_resident ? adjacency_bytes : adjacency_min) + feature_bytes <= left;
  uint64_t room = left - (plan.adjacency_resident ? adjacency_bytes : 0) -
                  (plan.features_resident ? feature_bytes : 0);
  if (!plan.adjacency_resident) {
    // Half of the room (all of it when the features are resident), never more than needed.
    const uint64_t share = plan.features_resident ? room : room / 2;
    plan.adjacency_buffer_bytes = std::clamp(share / 2, adjacency_min / 2, adjacency_bytes);
    room -= std::min(room, 2 * plan.adjacency_buffer_bytes);
  }
  if (!plan.features_resident) {
    plan.feature_buffer_bytes =
        std::clamp(room / (2 * files), features_min / (2 * files), feature_bytes / files);
  }
  return plan;
}

}  // namespace strata
