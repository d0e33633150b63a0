#include "fullgraph/full_graph_runner.h"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <string_view>

#include "common/random.h"
#include "dataset/stored_ids.h"
#include "features/row_codec.h"
#include "fullgraph/input_products.h"
#include "fullgraph/propagation.h"
#include "nn/dropout.h"
#include "nn/gat_conv.h"
#include "nn/gcn_conv.h"
#include "nn/gemm.h"
#include "nn/loss.h"
#include "nn/model.h"
#include "nn/model_seeds.h"
#include "nn/optimizer.h"
#include "nn/parallel.h"
#include "nn/parameter_hash.h"
#include "nn/row_copy.h"
#include "nn/row_ops.h"
#include "nn/sage_conv.h"
#include "strata/error.h"

namespace strata {

namespace {

// The work of a sparse input value's preparation in ForRows' units (about a multiply-add each):
// a dependent add to its row's norm and a quarter of a dropout draw, each weighed 16 by their
// kernels (InverseRowNorms, DropoutNonzerosCsr).
constexpr uint64_t kPrepareWork = 32;

// The N-row matrices are read at random rows (a neighbour's), so a 4 KiB page per access
// would miss the TLB on most edges; 2 MiB pages, where the kernel has them, cover 32× more
// rows per entry. Advice only: its failure changes nothing but speed.
void AdviseHugePages(void* data, uint64_t bytes) {
  const auto begin = (reinterpret_cast<uintptr_t>(data) + 4095) / 4096 * 4096;
  const auto end = (reinterpret_cast<uintptr_t>(data) + bytes) / 4096 * 4096;
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

void AddRows(MatrixSpan<const float> from, MatrixSpan<float> to) {
  for (size_t r = 0; r < to.rows(); ++r) AddRow(to.row(r), from.row(r), to.cols());
}

uint8_t SplitBit(Split split) { return uint8_t{1} << static_cast<int>(split); }

// The input-dropout seed of the kFullGraphRowGroup rows that hold `row`: a group's masks are
// its own, however the input groups around it are cut.
uint64_t RowGroupDropoutSeed(uint64_t step_seed, uint64_t row) {
  return MixSeed(InputDropoutSeed(step_seed), row / kFullGraphRowGroup);
}

}  // namespace

FullGraphRunner::FullGraphRunner(const TrainOptions& o, Dataset dataset)
    : dataset_(std::move(dataset)), budget_(o.memory_budget_bytes) {
  const DatasetMeta& meta = dataset_.meta();
  if (meta.feature_dim == 0) throw Error::Input("the dataset has no features", dataset_.dir());
  if (meta.num_classes == 0) throw Error::Input("the dataset has no labels", dataset_.dir());
  CheckModelOptions(o.model);
  CheckFullGraphOptions(o);
  // Planned before anything is charged, so that a small budget gets one line naming the
  // smallest that works rather than the first allocation's refusal.
  plan_ = PlanFullGraph(meta, o, MeasureStreamExtents(dataset_), budget_.limit());
  nodes_ = meta.num_nodes;
  static_cast<ModelOptions&>(config_) = o.model;
  config_.in_dim = meta.feature_dim;
  config_.num_classes = meta.num_classes;
  config_.seed = o.seed;
  config_.threads = std::max(1u, o.threads);
  chunk_rows_ = o.full_graph_chunk_rows;

  const uint64_t n = nodes_;
  const uint64_t id_bytes = meta.node_id_bytes;
  const uint64_t stride = meta.row_stride_bytes;
  const bool sparse = meta.sparse_features;
  RowOffset adjacency_offset = [this, id_bytes](uint64_t row) {
    return adjacency_offsets_.Offset(row) * id_bytes;
  };
  // Dense rows are strided; a sparse row's ids and values (4 bytes each) start at its offset.
  RowOffset feature_offset = [this, stride, sparse](uint64_t row) {
    return sparse ? feature_offsets_.Offset(row) * 4 : row * stride;
  };
  std::vector<std::string> feature_files = {
      dataset_.PathOf(sparse ? kSparseIndicesFile : kFeaturesFile)};
  if (sparse && !plan_.unit_values) feature_files.push_back(dataset_.PathOf(kSparseValuesFile));
  const std::string scratch_dir =
      plan_.intermediates_on_disk ? ScratchDirectory(o.scratch_dir) : std::string();

  adjacency_offsets_ =
      GroupedRowOffsets(dataset_.PathOf(kIndptrFile), n, meta.num_edges, kFullGraphRowGroup,
                        plan_.adjacency_longest_row, budget_, "the graph's indptr");
  piece_offsets_ =
      ChargedArray<uint64_t>(budget_, std::min(n, chunk_rows_) + 1, "an adjacency piece's offsets");
  if (sparse) {
    feature_offsets_ = GroupedRowOffsets(dataset_.PathOf(kSparseIndptrFile), n, meta.feature_nnz,
                                         kFullGraphRowGroup, plan_.feature_longest_row, budget_,
                                         "the features' indptr");
  }
  sage_ = config_.kind == ModelKind::kSage;
  gat_ = config_.kind == ModelKind::kGat;
  if (!gat_) {
    norm_ = ChargedArray<float>(budget_, n, sage_ ? "inverse in-degrees" : "GCN normalisation");
    // A piece's rows at a time, through the piece's offsets.
    for (uint64_t begin = 0; begin < n; begin += piece_offsets_.size() - 1) {
      const uint64_t end = std::min(n, begin + piece_offsets_.size() - 1);
      const std::span<const uint64_t> offsets = PieceOffsets(begin, end);
      const std::span<float> norm(norm_.data() + begin, end - begin);
      if (sage_) {
        InverseInDegrees(offsets, norm);
      } else {
        GcnNormalisation(offsets, norm);
      }
    }
  }
  wide_labels_ = dataset_.ReadLabels(budget_);
  if (NarrowLabels(meta.num_classes)) {
    narrow_labels_ = ChargedArray<int16_t>(budget_, n, "labels");
    std::copy_n(wide_labels_.data(), n, narrow_labels_.data());
    wide_labels_ = ChargedArray<int32_t>();
  }
  splits_ = ChargedArray<uint8_t>(budget_, n, "split membership");
  std::fill_n(splits_.data(), n, 0);
  for (Split split : kAllSplits) {
    for (uint64_t v : dataset_.ReadSplit(split)) splits_[v] |= SplitBit(split);
  }
  chunk_labels_ = ChargedArray<int32_t>(budget_, std::min(n, chunk_rows_), "a chunk's labels");
  uint64_t labelled = 0;
  for (uint64_t v = 0; v < n; ++v) {
    labelled += (splits_[v] & SplitBit(Split::kTrain)) != 0 && LabelOf(v) >= 0;
  }
  train_inv_count_ = labelled == 0 ? 0.0 : 1.0 / double(labelled);

  size_t widest = 0, statistics = 0, source = 0, groups = 1, staged = 0;
  for (const FullGraphLayerShape& shape :
       FullGraphLayers(o.model, meta.feature_dim, meta.num_classes)) {
    const size_t l = layers_.size(), in = shape.in, out = shape.out;
    const uint64_t seed = LayerSeed(config_.seed, l);
    // SAGE's weight is W_self over W_neigh, as the mini-batch SAGEConv's; GAT's is in × H F.
    const size_t rows = sage_ ? 2 * in : in;
    const size_t cols = shape.heads * shape.per_head;
    const size_t heads = gat_ ? shape.heads : 0;
    Layer layer{Matrix(rows, cols),
                Matrix(rows, cols),
                LayerBias<float>(out, config_.bias),
                shape,
                Matrix(heads, shape.per_head),
                Matrix(heads, shape.per_head),
                Matrix(heads, shape.per_head),
                Matrix(heads, shape.per_head)};
    if (gat_) {
      InitGatParameters(layer.weight.span(), layer.attn_l.span(), layer.attn_r.span(), seed);
      const GraphAttention a = AttentionOf(layer, 0, 0);
      std::vector<IntermediateRows> kept;
      for (size_t g = 0; g * GroupHeads(shape) < a.heads; ++g) {
        const GraphAttention part = GroupOf(a, g);
        kept.emplace_back(n, part.transformed_width(), chunk_rows_, scratch_dir, budget_,
                          "GAT's transformed rows");
        statistics = std::max(statistics, part.statistics_width());
        source = std::max(source, part.source_width());
      }
      groups = std::max(groups, kept.size());
      staged = std::max(staged, a.transformed_width());
      transformed_.push_back(std::move(kept));
    } else if (sage_) {
      InitSageWeight(layer.weight.span(), seed);
    } else {
      InitGcnWeight(layer.weight.span(), seed);
    }
    layers_.push_back(std::move(layer));
    // GAT's outputs are cut as its heads are, the columns of each group of heads a slice.
    const size_t output_slice = !gat_          ? plan_.slice_width
                                : shape.concat ? GroupHeads(shape) * shape.per_head
                                               : out;
    outputs_.emplace_back(n, out, output_slice, chunk_rows_, scratch_dir, budget_,
                          "full-graph layer outputs", config_.threads);
    widest = std::max(widest, out);
  }
  gathered_ = ChargedArray<float>(budget_, n * plan_.slice_width + kGatheredAlignFloats,
                                  "the full graph's propagation input");
  gathered_base_ =
      gathered_.data() + (kGatheredAlignFloats - reinterpret_cast<uintptr_t>(gathered_.data()) /
                                                     sizeof(float) % kGatheredAlignFloats) %
                             kGatheredAlignFloats;
  AdviseHugePages(gathered_base_, n * plan_.slice_width * sizeof(float));
  if (plan_.slices > 1 && !gat_) {
    slices_ = ColumnSlices(n, widest, plan_.slice_width, chunk_rows_, scratch_dir, budget_,
                           "the full graph's propagation input slices", config_.threads);
  }
  if (plan_.gradient_width > 0) {
    gradient_ =
        ColumnSlices(n, plan_.gradient_width, gat_ ? widest : plan_.slice_width, chunk_rows_,
                     scratch_dir, budget_, "full-graph gradients", config_.threads);
  }
  if (sage_) {
    self_rows_ = ColumnSlices(n, widest, plan_.slice_width, chunk_rows_, scratch_dir, budget_,
                              "full-graph self terms and their gradients", config_.threads);
  }
  if (gat_) {
    attention_statistics_ = IntermediateRows(n, statistics, chunk_rows_, scratch_dir, budget_,
                                             "GAT's attention statistics");
    for (size_t g = 0; g < groups; ++g) {
      source_gradients_.emplace_back(n, source, chunk_rows_, scratch_dir, budget_,
                                     "GAT's source gradients");
    }
    if (groups > 1) {
      group_staging_ = ChargedArray<float>(budget_, std::min(n, chunk_rows_) * staged,
                                           "GAT's full transformed and source rows, a chunk");
    }
  }
  group_rows_ = ChargedArray<float>(budget_, plan_.input_group_floats, "an input row group");
  if (!gat_ && plan_.symmetric) {
    span_gradient_ = ChargedArray<float>(
        budget_, std::min(n, kFullGraphSpanRows) * layers_[0].shape.out, "a span of dP");
  }
  optimizer_ = MakeOptimizer(o.optimizer, Parameters());
  row_normalize_ = o.features.row_normalize;

  // The streams as planned: resident, or read through RoBW buffers (MaxMemory: past a
  // resident prefix, without read-ahead).
  IoEngineOptions io;
  io.depth = o.io_depth;
  auto open = [&](const std::vector<std::string>& paths, uint64_t group, const RowOffset& offset_of,
                  bool resident, uint64_t buffer_bytes, uint64_t prefix_bytes,
                  std::string_view what) -> std::unique_ptr<RowBlockSource> {
    if (resident) return std::make_unique<ResidentRows>(paths, n, offset_of, budget_, what);
    return std::make_unique<StreamedRows>(paths, n, group, offset_of, buffer_bytes, io, budget_,
                                          what, prefix_bytes, !o.full_graph_max_memory);
  };
  adjacency_ = open({dataset_.PathOf(kIndicesFile)}, 1, adjacency_offset, plan_.adjacency_resident,
                    plan_.adjacency_buffer_bytes, plan_.adjacency_prefix_bytes, "the adjacency");
  features_ = open(feature_files, kFullGraphRowGroup, feature_offset, plan_.features_resident,
                   plan_.feature_buffer_bytes, plan_.feature_prefix_bytes, "the features");
  plan_.adjacency_blocks = adjacency_->blocks().size();
  plan_.feature_blocks = features_->blocks().size();
}

FullGraphRunner::~FullGraphRunner() = default;

std::vector<Parameter> FullGraphRunner::Parameters() {
  std::vector<Parameter> params;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& layer = layers_[l];
    const std::string prefix = "layers." + std::to_string(l) + ".";
    // Named as the mini-batch layers name them, for one checkpoint format.
    if (sage_) {
      params.push_back({prefix + "w_self", SelfPart(layer.weight, layer.shape.in),
                        SelfPart(layer.weight_grad, layer.shape.in)});
      params.push_back({prefix + "w_neigh", NeighbourPart(layer.weight, layer.shape.in),
                        NeighbourPart(layer.weight_grad, layer.shape.in)});
    } else {
      params.push_back({prefix + "weight", layer.weight.span(), layer.weight_grad.span()});
    }
    if (gat_) {
      params.push_back({prefix + "attn_l", layer.attn_l.span(), layer.attn_l_grad.span()});
      params.push_back({prefix + "attn_r", layer.attn_r.span(), layer.attn_r_grad.span()});
    }
    layer.bias.AppendParameter(prefix, params);
  }
  return params;
}

RowStreamStats FullGraphRunner::StreamStats() const {
  RowStreamStats total;
  for (const RowBlockSource* source : {adjacency_.get(), features_.get()}) {
    const RowStreamStats s = source->stats();
    total.bytes_read += s.bytes_read;
    total.reads += s.reads;
    total.wait_s += s.wait_s;
  }
  return total;
}

IntermediateStats FullGraphRunner::IntermediateTotals() const {
  IntermediateStats total;
  for (const ColumnSlices& output : outputs_) total += output.stats();
  total += gradient_.stats();
  total += self_rows_.stats();
  for (const std::vector<IntermediateRows>& kept : transformed_) {
    for (const IntermediateRows& rows : kept) total += rows.stats();
  }
  total += attention_statistics_.stats();
  for (const IntermediateRows& rows : source_gradients_) total += rows.stats();
  total += slices_.stats();
  return total;
}

void FullGraphRunner::ForEachInputGroup(bool training, uint64_t step_seed,
                                        const std::function<void(const InputGroup&)>& fn) {
  const DatasetMeta& meta = dataset_.meta();
  const size_t dim = meta.feature_dim;
  const double p = training ? config_.input_dropout : 0;
  const bool in_place = meta.feature_dtype == FeatureDtype::kFloat32 && p == 0;
  const uint64_t group_rows = InputGroupRows(meta.sparse_features);
  features_->ForEachBlock([&](const RowBlock& block, const RowAddress& row) {
    for (uint64_t first = block.begin, end; first < block.end; first = end) {
      end = RunEnd(first, block.end, group_rows);
      InputGroup group;
      group.first = first;
      group.rows = end - first;
      if (row_normalize_) group.row_scale = {group_scale_.data(), group.rows};
      // The row normalisation, of the features before dropout.
      auto scale_rows = [&] {
        if (row_normalize_) InverseRowNorms(group, group_scale_, config_.threads);
      };
      if (meta.sparse_features) {
        group.indptr = {group_indptr_.data(), group.rows + 1};
        feature_offsets_.Offsets(first, std::span(group_indptr_).subspan(0, group.rows + 1));
        group.columns = reinterpret_cast<const uint32_t*>(row(0, first));
        const float* stored =
            plan_.unit_values ? nullptr : reinterpret_cast<const float*>(row(1, first));
        group.values = stored != nullptr && p == 0 ? stored : group_rows_.data();
        PrepareSparseGroup(group, stored, p, step_seed);
      } else if (in_place) {
        group.dense = MatrixSpan<const float>(reinterpret_cast<const float*>(row(0, first)),
                                              group.rows, dim, meta.row_stride_bytes / 4);
        scale_rows();
      } else {
        MatrixSpan<float> decoded(group_rows_.data(), group.rows, dim);
        for (uint64_t i = 0; i < group.rows; ++i) {
          DecodeRow(row(0, first + i), meta.feature_dtype, decoded.row_span(i));
        }
        group.dense = decoded;
        scale_rows();
        if (p > 0) {
          DropoutNonzeros<float>(decoded, p, RowGroupDropoutSeed(step_seed, first),
                                 config_.threads);
        }
      }
      fn(group);
    }
  });
}

void FullGraphRunner::PrepareSparseGroup(const InputGroup& group, const float* stored, double p,
                                         uint64_t step_seed) {
  const bool own = group.values == group_rows_.data();
  if (!own && group.row_scale.empty()) return;
  const uint64_t base = group.indptr[0];
  const uint64_t nonzeros = group.indptr[group.rows] - base;
  const uint64_t pieces = (group.rows + kFullGraphRowGroup - 1) / kFullGraphRowGroup;
  ForRows(config_.threads, pieces, (nonzeros / pieces + kFullGraphRowGroup) * kPrepareWork,
          [&](uint64_t first_piece, uint64_t end_piece) {
            for (uint64_t k = first_piece; k < end_piece; ++k) {
              const uint64_t begin = k * kFullGraphRowGroup;
              const InputGroup piece =
                  group.Rows(begin, std::min(group.rows, begin + kFullGraphRowGroup));
              const uint64_t offset = piece.indptr[0] - base;
              const uint64_t count = piece.indptr[piece.rows] - piece.indptr[0];
              float* values = group_rows_.data() + offset;
              if (own && stored != nullptr) std::copy_n(stored + offset, count, values);
              if (own && stored == nullptr) std::fill_n(values, count, 1.0f);
              if (!piece.row_scale.empty()) {
                InverseRowNorms(piece, std::span(group_scale_).subspan(begin, piece.rows), 1);
              }
              if (p > 0) {
                DropoutNonzerosCsr<float>(piece.indptr, {values, count}, p,
                                          RowGroupDropoutSeed(step_seed, piece.first), 1);
              }
            }
          });
}

std::span<const int32_t> FullGraphRunner::SplitLabels(Split split, uint64_t begin, uint64_t end) {
  const uint8_t bit = SplitBit(split);
  for (uint64_t v = begin; v < end; ++v) {
    chunk_labels_[v - begin] = (splits_[v] & bit) != 0 ? LabelOf(v) : -1;
  }
  return {chunk_labels_.data(), end - begin};
}

void FullGraphRunner::ForEachChunk(const std::function<void(uint64_t, uint64_t)>& fn) const {
  for (uint64_t begin = 0; begin < nodes_; begin += chunk_rows_) {
    fn(begin, std::min(nodes_, begin + chunk_rows_));
  }
}

std::span<const uint64_t> FullGraphRunner::PieceOffsets(uint64_t begin, uint64_t end) {
  if (end - begin >= piece_offsets_.size()) {
    throw Error::Internal("FullGraphRunner: an adjacency piece longer than a chunk");
  }
  const std::span<uint64_t> offsets(piece_offsets_.data(), end - begin + 1);
  adjacency_offsets_.Offsets(begin, offsets);
  return offsets;
}

AdjacencyBlock FullGraphRunner::AdjacencyPiece(uint64_t begin, uint64_t end,
                                               const RowAddress& row) {
  const std::span<const uint64_t> offsets = PieceOffsets(begin, end);
  const uint32_t id_bytes = dataset_.meta().node_id_bytes;
  // The kernels index rows by these ids: checked at each use, since the file is read again
  // every pass (one sequential scan of ids the kernel reads anyway, against a random row
  // access per id in the kernel).
  CheckStoredIds(row(0, begin), offsets.back() - offsets.front(), id_bytes, offsets.front(), nodes_,
                 dataset_.PathOf(kIndicesFile));
  return {{begin, end}, RowOffsetsView(offsets, begin), row(0, begin), id_bytes, nodes_};
}

// The adjacency's blocks cut at chunk boundaries, so that every piece of a written or read
// intermediate lies in one chunk: fn(sub-block) for each, in row order.
void FullGraphRunner::ForEachAdjacencyPiece(const std::function<void(const AdjacencyBlock&)>& fn) {
  adjacency_->ForEachBlock([&](const RowBlock& block, const RowAddress& row) {
    for (uint64_t begin = block.begin, end; begin < block.end; begin = end) {
      end = RunEnd(begin, block.end, chunk_rows_);
      fn(AdjacencyPiece(begin, end, row));
    }
  });
}

PropagationWeights FullGraphRunner::Aggregation() const {
  const std::span<const float> norm(norm_.data(), nodes_);
  return sage_ ? PropagationWeights::Mean(norm) : PropagationWeights::Gcn(norm);
}

PropagationWeights FullGraphRunner::TransposedGather() const {
  const std::span<const float> norm(norm_.data(), nodes_);
  return sage_ ? PropagationWeights::MeanTransposed(norm) : PropagationWeights::Gcn(norm);
}

void FullGraphRunner::BeginGathered(size_t width, GatheredPass pass) {
  gathered_width_ = width;
  gathered_pass_ = pass;
  if (!Sliced(width)) return;
  if (pass == GatheredPass::kWrite) {
    slices_.BeginWrite(width, Gathered(slices_.SliceWidth(0, width)));
  } else {
    slices_.BeginRead();
  }
}

MatrixSpan<float> FullGraphRunner::GatheredRows(uint64_t begin, uint64_t end) {
  if (!Sliced(gathered_width_)) return Gathered(gathered_width_).RowRange(begin, end - begin);
  return gathered_pass_ == GatheredPass::kWrite ? slices_.Write(begin, end)
                                                : slices_.Read(begin, end);
}

void FullGraphRunner::EndGathered() {
  if (!Sliced(gathered_width_)) return;
  if (gathered_pass_ == GatheredPass::kWrite) {
    slices_.EndWrite();
  } else {
    slices_.EndRead();
  }
}

void FullGraphRunner::PropagateInto(size_t width, const PropagationWeights& weights,
                                    ColumnSlices& out, const PropagatedRowsFn& then) {
  // Sliced, each slice is loaded (the first is still resident from its write) and propagated
  // into its slice of `out`, which its readers assemble into full rows.
  // The input's rows are weighed by their source weights in place, once a slice is resident:
  // no reader needs them after the propagation.
  const bool sliced = Sliced(width);
  out.BeginWrite(width);
  for (size_t s = 0; s < (sliced ? slices_.SliceCount(width) : 1); ++s) {
    const MatrixSpan<float> in = Gathered(sliced ? slices_.SliceWidth(s, width) : width);
    if (sliced) slices_.Load(s, in);
    ScaleBySource(weights.source, in, config_.threads);
    const size_t first_column = sliced ? slices_.FirstColumn(s) : 0;
    ForEachAdjacencyPiece([&](const AdjacencyBlock& piece) {
      MatrixSpan<float> rows = out.WriteSlice(s, piece.rows.begin, piece.rows.end);
      Propagate(piece, weights.OfScaledSources(), in, rows, config_.threads);
      if (then) then(rows, piece.rows.begin, s, first_column);
    });
  }
  out.EndWrite();
}

void FullGraphRunner::ScatterTransposed(
    ColumnSlices& grad_out, size_t width,
    const std::function<void(MatrixSpan<const float>, uint64_t)>& each) {
  // Sliced, grad_out is read once per slice, and each slice's sums are stored to its file.
  const bool sliced = Sliced(width);
  for (size_t s = 0; s < (sliced ? slices_.SliceCount(width) : 1); ++s) {
    const size_t first = sliced ? slices_.FirstColumn(s) : 0;
    const MatrixSpan<float> grad_in = Gathered(sliced ? slices_.SliceWidth(s, width) : width);
    std::fill_n(grad_in.data(), grad_in.rows() * grad_in.stride(), 0.0f);
    grad_out.BeginRead();
    ForEachAdjacencyPiece([&](const AdjacencyBlock& piece) {
      MatrixSpan<const float> rows = grad_out.Read(piece.rows.begin, piece.rows.end);
      if (s == 0) each(rows, piece.rows.begin);
      const MatrixSpan<const float> columns(rows.data() + first, rows.rows(), grad_in.cols(),
                                            rows.stride());
      PropagateTransposed(piece, Aggregation(), columns, grad_in, config_.threads);
    });
    grad_out.EndRead();
    if (sliced) slices_.Store(s, width, grad_in);
  }
}

void FullGraphRunner::Transform(size_t l, bool training, uint64_t step_seed,
                                std::span<const InputProduct> products,
                                const std::function<void(uint64_t, uint64_t)>& done) {
  const unsigned threads = config_.threads;
  if (l == 0) {
    ForEachInputGroup(training, step_seed, [&](const InputGroup& group) {
      const uint64_t end = group.first + group.rows;
      for (const InputProduct& product : products) {
        MatrixSpan<float> rows = product.out(group.first, end);
        InputTimes(group, product.weight, rows, threads);
      }
      if (done) done(group.first, end);
    });
    return;
  }
  ColumnSlices& previous = outputs_[l - 1];
  previous.BeginRead(/*whole_chunks=*/true);
  ForEachChunk([&](uint64_t begin, uint64_t end) {
    MatrixSpan<const float> h = previous.Read(begin, end);
    for (const InputProduct& product : products) {
      Gemm<float>(Trans::kNo, Trans::kNo, 1, h, product.weight, 0, product.out(begin, end),
                  threads);
    }
    if (done) done(begin, end);
  });
  previous.EndRead();
}

void FullGraphRunner::FinishRows(size_t l, double p, uint64_t seed, MatrixSpan<float> rows,
                                 uint64_t first, size_t first_column) {
  const unsigned threads = config_.threads;
  layers_[l].bias.AddTo(rows, threads, first_column);
  if (l + 1 == layers_.size()) return;
  if (config_.activation == Activation::kElu) {
    EluDropout<float>(rows, p, seed, threads, first, first_column);
  } else {
    ReluDropout<float>(rows, p, seed, threads, first, first_column);
  }
}

void FullGraphRunner::Forward(bool training, uint64_t step_seed) {
  for (size_t l = 0; l < layers_.size(); ++l) {
    if (gat_) {
      AttentionForward(l, training, step_seed);
      continue;
    }
    Layer& layer = layers_[l];
    const size_t in = layer.shape.in, out = layer.shape.out;
    // P = H W (SAGE: H W_neigh, gathered; and the self term S = H W_self, in row order).
    BeginGathered(out, GatheredPass::kWrite);
    std::vector<InputProduct> products = {
        {NeighbourPart(layer.weight, in),
         [&](uint64_t begin, uint64_t end) { return GatheredRows(begin, end); }}};
    if (sage_) {
      self_rows_.BeginWrite(out);
      products.push_back({SelfPart(layer.weight, in), [&](uint64_t begin, uint64_t end) {
                            return self_rows_.Write(begin, end);
                          }});
    }
    Transform(l, training, step_seed, products, nullptr);
    EndGathered();
    if (sage_) {
      self_rows_.EndWrite();
      self_rows_.BeginRead();
    }
    const double p = training ? config_.dropout : 0;
    const uint64_t seed = ActivationDropoutSeed(step_seed, l);
    PropagateInto(out, Aggregation(), outputs_[l],
                  [&](MatrixSpan<float> rows, uint64_t first, size_t s, size_t first_column) {
                    if (sage_) AddRows(self_rows_.ReadSlice(s, first, first + rows.rows()), rows);
                    FinishRows(l, p, seed, rows, first, first_column);
                  });
    if (sage_) self_rows_.EndRead();
  }
}

GraphAttention FullGraphRunner::AttentionOf(const Layer& layer, double dropout,
                                            uint64_t seed) const {
  const FullGraphLayerShape& shape = layer.shape;
  return GraphAttention{shape.heads,         shape.per_head, shape.concat, layer.attn_l.span(),
                        layer.attn_r.span(), dropout,        seed};
}

void FullGraphRunner::AttentionForward(size_t l, bool training, uint64_t step_seed) {
  const unsigned threads = config_.threads;
  Layer& layer = layers_[l];
  const GraphAttention a = AttentionOf(layer, training ? config_.attention_dropout : 0,
                                       AttentionDropoutSeed(step_seed, l));
  // [H W | el] a group of heads at a time (whole: one group), the first group's gathered, and
  // kept in row order: when training, for the backward pass; a later group's, for its own
  // gather. Grouped, each chunk's full rows are staged and split into the groups'.
  std::vector<IntermediateRows>& kept = transformed_[l];
  const bool grouped = kept.size() > 1;
  auto keeps = [&](size_t g) { return training || g > 0; };
  const MatrixSpan<float> first = Gathered(GroupOf(a, 0).transformed_width());
  auto full_rows = [&](uint64_t begin, uint64_t end) {
    return grouped ? StagedRows(begin, end, a.transformed_width())
                   : first.RowRange(begin, end - begin);
  };
  for (size_t g = 0; g < kept.size(); ++g) {
    if (keeps(g)) kept[g].BeginWrite(GroupOf(a, g).transformed_width());
  }
  const InputProduct product{layer.weight.span(), [&](uint64_t begin, uint64_t end) {
                               return full_rows(begin, end).Sub(0, 0, end - begin, a.width());
                             }};
  Transform(l, training, step_seed, {&product, 1}, [&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> rows = full_rows(begin, end);
    SourceScores(a, rows, threads);
    for (size_t g = 0; g < kept.size(); ++g) {
      const GraphAttention part = GroupOf(a, g);
      if (grouped && g == 0) {
        GroupRows(a, 0, part.heads, rows, first.RowRange(begin, end - begin));
      }
      if (!keeps(g)) continue;
      MatrixSpan<float> to = kept[g].Write(begin, end);
      if (grouped) {
        GroupRows(a, part.first_head, part.heads, rows, to);
      } else {
        CopyRows(rows, to, threads);
      }
    }
  });
  for (size_t g = 0; g < kept.size(); ++g) {
    if (keeps(g)) kept[g].EndWrite();
  }
  // Each group attends into its columns of the output (an averaged layer is one group).
  const double p = training ? config_.dropout : 0;
  const uint64_t seed = ActivationDropoutSeed(step_seed, l);
  ColumnSlices& out = outputs_[l];
  out.BeginWrite(layer.shape.out);
  for (size_t g = 0; g < kept.size(); ++g) {
    const GraphAttention part = GroupOf(a, g);
    const MatrixSpan<float> transformed = Gathered(part.transformed_width());
    if (g > 0) kept[g].Load(transformed);
    ForEachAdjacencyPiece([&](const AdjacencyBlock& piece) {
      MatrixSpan<float> rows = out.WriteSlice(g, piece.rows.begin, piece.rows.end);
      AttendBlock(piece, part, transformed, rows, threads);
      FinishRows(l, p, seed, rows, piece.rows.begin, part.first_head * part.per_head);
    });
  }
  out.EndWrite();
}

void FullGraphRunner::AttentionBackward(size_t l, uint64_t step_seed) {
  const unsigned threads = config_.threads;
  Layer& layer = layers_[l];
  const GraphAttention a =
      AttentionOf(layer, config_.attention_dropout, AttentionDropoutSeed(step_seed, l));
  std::vector<IntermediateRows>& kept = transformed_[l];
  const bool grouped = kept.size() > 1;
  // Each group of heads, with its [H W | el] gathered again, to its source gradients.
  for (size_t g = 0; g < kept.size(); ++g) {
    const GraphAttention part = GroupOf(a, g);
    const MatrixSpan<float> transformed = Gathered(part.transformed_width());
    kept[g].Load(transformed);
    if (plan_.symmetric) {
      BackwardByGathers(l, part, transformed, kept[g], source_gradients_[g]);
    } else {
      BackwardByScatter(l, part, transformed, source_gradients_[g]);
    }
  }
  // The attention vectors' and the weight's gradients, and the previous layer's output's, in
  // row order: dW = H_lᵀ dL/dWh, dH_l = dL/dWh Wᵀ (grouped, dL/dWh assembled from the
  // groups').
  for (size_t g = 0; g < kept.size(); ++g) {
    kept[g].BeginRead();
    source_gradients_[g].BeginRead();
  }
  // The attention vectors' sums go `sum_rows` rows at a time (from multiples of it), a cut that
  // no budget moves: the input's 128-row groups, or chunks.
  auto vector_gradients = [&](uint64_t begin, uint64_t end, uint64_t sum_rows) {
    MatrixSpan<float> grad_wh;
    for (size_t g = 0; g < kept.size(); ++g) {
      const GraphAttention part = GroupOf(a, g);
      MatrixSpan<float> rows = source_gradients_[g].Read(begin, end);
      const MatrixSpan<const float> transformed = kept[g].Read(begin, end);
      for (uint64_t first = begin, stop; first < end; first = stop) {
        stop = RunEnd(first, end, sum_rows);
        AttentionVectorGradients(part, transformed.RowRange(first - begin, stop - first),
                                 rows.RowRange(first - begin, stop - first),
                                 layer.attn_l_grad.span().RowRange(part.first_head, part.heads),
                                 layer.attn_r_grad.span().RowRange(part.first_head, part.heads),
                                 /*accumulate=*/first != 0);
      }
      if (!grouped) return rows.Sub(0, 0, end - begin, a.width());
      grad_wh = StagedRows(begin, end, a.width());
      CopyRows(rows.Sub(0, 0, end - begin, part.width()),
               grad_wh.Sub(0, part.first_head * part.per_head, end - begin, part.width()), threads);
    }
    return grad_wh;
  };
  if (l == 0) {
    ForEachInputGroup(true, step_seed, [&](const InputGroup& group) {
      MatrixSpan<float> grad_wh =
          vector_gradients(group.first, group.first + group.rows, kFullGraphRowGroup);
      InputTransposedTimes(group, grad_wh, layer.weight_grad.span(), group.first != 0, threads);
    });
  } else {
    ColumnSlices& previous = outputs_[l - 1];
    previous.BeginRead(/*whole_chunks=*/true);
    gradient_.BeginWrite(layer.shape.in);
    ForEachChunk([&](uint64_t begin, uint64_t end) {
      MatrixSpan<const float> grad_wh = vector_gradients(begin, end, chunk_rows_);
      MatrixSpan<const float> h = previous.Read(begin, end);
      Gemm<float>(Trans::kYes, Trans::kNo, 1, h, grad_wh, begin == 0 ? 0 : 1,
                  layer.weight_grad.span(), threads);
      MatrixSpan<float> grad_previous = gradient_.Write(begin, end);
      Gemm<float>(Trans::kNo, Trans::kYes, 1, grad_wh, layer.weight.span(), 0, grad_previous,
                  threads);
      ActivationBackward(l - 1, h, grad_previous, step_seed, begin);
    });
    gradient_.EndWrite();
    previous.EndRead();
  }
  for (size_t g = 0; g < kept.size(); ++g) {
    source_gradients_[g].EndRead();
    kept[g].EndRead();
  }
}

MatrixSpan<const float> FullGraphRunner::GroupGradient(const GraphAttention& group,
                                                       MatrixSpan<const float> grad_out) const {
  return grad_out.Sub(0, group.concat ? group.first_head * group.per_head : 0, grad_out.rows(),
                      group.out_dim());
}

void FullGraphRunner::BackwardByGathers(size_t l, const GraphAttention& a,
                                        MatrixSpan<const float> transformed, IntermediateRows& kept,
                                        IntermediateRows& source) {
  const unsigned threads = config_.threads;
  // By destination: the attention's statistics.
  gradient_.BeginRead();
  attention_statistics_.BeginWrite(a.statistics_width());
  ForEachAdjacencyPiece([&](const AdjacencyBlock& piece) {
    const uint64_t begin = piece.rows.begin, end = piece.rows.end;
    AttentionStatistics(piece, a, transformed, GroupGradient(a, gradient_.Read(begin, end)),
                        attention_statistics_.Write(begin, end), threads);
  });
  attention_statistics_.EndWrite();
  gradient_.EndRead();
  // By source, [dL/dagg | statistics] gathered (over the transformed rows, which the kept copy
  // now stands for); the bias gradient on the way, with the first group.
  const MatrixSpan<float> gathered = Gathered(a.gradient_width());
  gradient_.BeginRead();
  attention_statistics_.BeginRead();
  ForEachChunk([&](uint64_t begin, uint64_t end) {
    MatrixSpan<const float> grad_out = gradient_.Read(begin, end);
    if (a.first_head == 0) layers_[l].bias.Backward(grad_out, threads, /*accumulate=*/begin != 0);
    GradientRows(a, GroupGradient(a, grad_out), attention_statistics_.Read(begin, end),
                 gathered.RowRange(begin, end - begin));
  });
  attention_statistics_.EndRead();
  gradient_.EndRead();
  kept.BeginRead();
  source.BeginWrite(a.source_width());
  ForEachAdjacencyPiece([&](const AdjacencyBlock& piece) {
    const uint64_t begin = piece.rows.begin, end = piece.rows.end;
    AttentionSourceGradients(piece, a, gathered, kept.Read(begin, end), source.Write(begin, end),
                             threads);
  });
  source.EndWrite();
  kept.EndRead();
}

void FullGraphRunner::BackwardByScatter(size_t l, const GraphAttention& a,
                                        MatrixSpan<const float> transformed,
                                        IntermediateRows& source) {
  const unsigned threads = config_.threads;
  // The scatter's sums beside the gathered rows (the plan charged both).
  const MatrixSpan<float> scattered(gathered_base_ + nodes_ * a.transformed_width(), nodes_,
                                    a.transformed_width());
  std::fill_n(scattered.data(), nodes_ * scattered.cols(), 0.0f);
  gradient_.BeginRead();
  attention_statistics_.BeginWrite(a.statistics_width());
  ForEachAdjacencyPiece([&](const AdjacencyBlock& piece) {
    const uint64_t begin = piece.rows.begin, end = piece.rows.end;
    AttentionScatter(piece, a, transformed, GroupGradient(a, gradient_.Read(begin, end)),
                     attention_statistics_.Write(begin, end), scattered, threads);
  });
  attention_statistics_.EndWrite();
  gradient_.EndRead();
  // In row order: the source rows, and the bias gradient on the way, with the first group.
  gradient_.BeginRead();
  attention_statistics_.BeginRead();
  source.BeginWrite(a.source_width());
  ForEachChunk([&](uint64_t begin, uint64_t end) {
    if (a.first_head == 0) {
      layers_[l].bias.Backward(gradient_.Read(begin, end), threads, /*accumulate=*/begin != 0);
    }
    ScatteredSourceRows(a, scattered.RowRange(begin, end - begin),
                        attention_statistics_.Read(begin, end), source.Write(begin, end));
  });
  source.EndWrite();
  attention_statistics_.EndRead();
  gradient_.EndRead();
}

void FullGraphRunner::ActivationBackward(size_t l, MatrixSpan<const float> h,
                                         MatrixSpan<float> grad, uint64_t step_seed,
                                         uint64_t first) {
  const uint64_t seed = ActivationDropoutSeed(step_seed, l);
  if (config_.activation == Activation::kElu) {
    EluDropoutBackward<float>(h, grad, config_.dropout, seed, config_.threads, first);
  } else {
    ReluDropoutBackward<float>(h, grad, config_.dropout, config_.threads);
  }
}

double FullGraphRunner::LossAndGradient() {
  // dL/dlogits goes where the last layer's backward propagation reads it: gathered, or walked
  // in row order by the directed graph's scatter.
  ColumnSlices& logits = outputs_.back();
  const size_t classes = config_.num_classes;
  const bool gathered = plan_.symmetric && !gat_;  // GAT's backward reads it in row order
  double total = 0;
  logits.BeginRead();
  if (gathered) {
    BeginGathered(classes, GatheredPass::kWrite);
  } else {
    gradient_.BeginWrite(classes);
  }
  ForEachChunk([&](uint64_t begin, uint64_t end) {
    MatrixSpan<float> grad = gathered ? GatheredRows(begin, end) : gradient_.Write(begin, end);
    total = SoftmaxCrossEntropyRows<float>(logits.Read(begin, end),
                                           SplitLabels(Split::kTrain, begin, end), grad,
                                           train_inv_count_, total);
  });
  logits.EndRead();
  if (gathered) {
    EndGathered();
  } else {
    gradient_.EndWrite();
  }
  return total * train_inv_count_;
}

void FullGraphRunner::Backward(uint64_t step_seed) {
  const unsigned threads = config_.threads;
  // Layer l's dL/d(output) G and dL/d(transformed input) dP = Âᵀ G: on an undirected graph G
  // is gathered and dP written to gradient_ (layer 0's by FirstLayerBackward); on a directed
  // one G is read from gradient_ in row order and dP scattered into the gathered matrix. SAGE's
  // self term's gradient is G itself, which the layer's products need after dP: it is kept in row
  // order in self_rows_.
  for (size_t l = layers_.size(); l-- > 0;) {
    if (gat_) {
      AttentionBackward(l, step_seed);
      continue;
    }
    Layer& layer = layers_[l];
    const size_t in = layer.shape.in, out = layer.shape.out;
    auto keep_self_gradient = [&](MatrixSpan<const float> rows, uint64_t first) {
      if (sage_) CopyRows(rows, self_rows_.Write(first, first + rows.rows()), threads);
    };
    if (sage_) self_rows_.BeginWrite(out);
    if (plan_.symmetric) {
      // G in row order, for the bias gradient and SAGE's copy (sliced, a pass over the disk).
      if (layer.bias.enabled() || sage_) {
        BeginGathered(out, GatheredPass::kRead);
        ForEachChunk([&](uint64_t begin, uint64_t end) {
          MatrixSpan<const float> rows = GatheredRows(begin, end);
          layer.bias.Backward(rows, threads, /*accumulate=*/begin != 0);
          keep_self_gradient(rows, begin);
        });
        EndGathered();
      }
      if (sage_) self_rows_.EndWrite();
      if (l == 0) {
        FirstLayerBackward(step_seed);
        break;
      }
      PropagateInto(out, TransposedGather(), gradient_, nullptr);
      gradient_.BeginRead();
    } else {
      ScatterTransposed(gradient_, out, [&](MatrixSpan<const float> rows, uint64_t first) {
        layer.bias.Backward(rows, threads, /*accumulate=*/first != 0);
        keep_self_gradient(rows, first);
      });
    }
    if (sage_) {
      if (!plan_.symmetric) self_rows_.EndWrite();
      self_rows_.BeginRead();
    }
    // Rows [begin, end) of dP, in order.
    if (!plan_.symmetric) BeginGathered(out, GatheredPass::kRead);
    if (l == 0) {  // a directed graph's (an undirected one's went by FirstLayerBackward)
      ForEachInputGroup(true, step_seed, [&](const InputGroup& group) {
        InputGradients(group, GatheredRows(group.first, group.first + group.rows));
      });
      EndGathered();
      if (sage_) self_rows_.EndRead();
      break;
    }
    auto grad_transformed = [&](uint64_t begin, uint64_t end) {
      return plan_.symmetric ? gradient_.Read(begin, end) : GatheredRows(begin, end);
    };
    const MatrixSpan<float> neighbour_grad = NeighbourPart(layer.weight_grad, in);
    const MatrixSpan<float> self_grad = SelfPart(layer.weight_grad, in);
    // dW_l = H_{l-1}ᵀ dP, one sum per chunk; G_{l-1} = dP W_lᵀ through the activation (SAGE:
    // + G W_selfᵀ, and dW_self = H_{l-1}ᵀ G).
    ColumnSlices& previous = outputs_[l - 1];
    previous.BeginRead(/*whole_chunks=*/true);
    // G_{l-1} goes where the next propagation reads it: gathered, or in row order.
    if (plan_.symmetric) {
      BeginGathered(in, GatheredPass::kWrite);
    } else {
      gradient_.BeginWrite(in);
    }
    ForEachChunk([&](uint64_t begin, uint64_t end) {
      MatrixSpan<const float> h = previous.Read(begin, end);
      MatrixSpan<const float> dp = grad_transformed(begin, end);
      const float first = begin == 0 ? 0 : 1;
      Gemm<float>(Trans::kYes, Trans::kNo, 1, h, dp, first, neighbour_grad, threads);
      MatrixSpan<float> grad_previous =
          plan_.symmetric ? GatheredRows(begin, end) : gradient_.Write(begin, end);
      Gemm<float>(Trans::kNo, Trans::kYes, 1, dp, NeighbourPart(layer.weight, in), 0, grad_previous,
                  threads);
      if (sage_) {
        MatrixSpan<const float> g = self_rows_.Read(begin, end);
        Gemm<float>(Trans::kYes, Trans::kNo, 1, h, g, first, self_grad, threads);
        Gemm<float>(Trans::kNo, Trans::kYes, 1, g, SelfPart(layer.weight, in), 1, grad_previous,
                    threads);
      }
      ActivationBackward(l - 1, h, grad_previous, step_seed, begin);
    });
    previous.EndRead();
    if (sage_) self_rows_.EndRead();
    if (plan_.symmetric) {
      gradient_.EndRead();
    } else {
      gradient_.EndWrite();
    }
    EndGathered();
  }
}

void FullGraphRunner::InputGradients(const InputGroup& group, MatrixSpan<float> dp) {
  const unsigned threads = config_.threads;
  Layer& layer = layers_[0];
  const size_t in = layer.shape.in;
  const bool accumulate = group.first != 0;
  InputTransposedTimes(group, dp, NeighbourPart(layer.weight_grad, in), accumulate, threads);
  if (sage_) {
    MatrixSpan<float> self = self_rows_.Read(group.first, group.first + group.rows);
    InputTransposedTimes(group, self, SelfPart(layer.weight_grad, in), accumulate, threads);
  }
}

void FullGraphRunner::FirstLayerBackward(uint64_t step_seed) {
  const size_t out = layers_[0].shape.out;
  const bool sliced = Sliced(out);
  const size_t slices = sliced ? slices_.SliceCount(out) : 1;
  // The slices before the last are those of G's first `joined` columns.
  const size_t joined = ColumnsBeforeLastSlice(out, plan_.slice_width);
  const PropagationWeights weights = TransposedGather();
  if (joined > 0) {
    // Of two slices, the first is unsliced to PropagateInto, which finds it where the write of
    // the propagation input left it held (BeginGathered).
    PropagateInto(joined, weights, gradient_, nullptr);
    gradient_.BeginRead();
  }
  const MatrixSpan<float> last = Gathered(out - joined);
  if (sliced) slices_.Load(slices - 1, last);
  ScaleBySource(weights.source, last, config_.threads);
  if (sage_) self_rows_.BeginRead();
  RowBlockPass adjacency(*adjacency_);
  RowBlock block{0, 0};
  RowAddress row;
  // Rows [span, span_end) of dP, computed when the first of their row groups comes (groups tile
  // the rows, so spans start on multiples of kFullGraphSpanRows and lie inside one chunk).
  uint64_t span = 0, span_end = 0;
  auto span_rows = [&] { return MatrixSpan<float>(span_gradient_.data(), span_end - span, out); };
  auto propagate_span = [&] {
    const MatrixSpan<float> dp = span_rows();
    // The span's rows may lie in two or more of the adjacency's blocks.
    for (uint64_t begin = span; begin < span_end;) {
      while (begin >= block.end) {
        if (!adjacency.Next(block, row)) {
          throw Error::Internal("FullGraphRunner: the adjacency ended early");
        }
      }
      const uint64_t stop = std::min(span_end, block.end);
      Propagate(AdjacencyPiece(begin, stop, row), weights.OfScaledSources(), last,
                dp.Sub(begin - span, joined, stop - begin, out - joined), config_.threads);
      begin = stop;
    }
    for (size_t s = 0; s + 1 < slices; ++s) {
      const MatrixSpan<const float> from = gradient_.ReadSlice(s, span, span_end);
      CopyRows(from, dp.Sub(0, slices_.FirstColumn(s), from.rows(), from.cols()), config_.threads);
    }
  };
  ForEachInputGroup(true, step_seed, [&](const InputGroup& group) {
    if (group.first >= span_end) {
      span = group.first;
      span_end = std::min(nodes_, span + kFullGraphSpanRows);
      propagate_span();
    }
    InputGradients(group, span_rows().RowRange(group.first - span, group.rows));
  });
  if (joined > 0) gradient_.EndRead();
  if (sage_) self_rows_.EndRead();
}

EpochReport FullGraphRunner::TrainEpoch(uint64_t epoch) {
  const auto start = std::chrono::steady_clock::now();
  const RowStreamStats before = StreamStats();
  const IntermediateStats scratch_before = IntermediateTotals();
  const uint64_t step_seed = MixSeed(config_.seed, epoch << 32);
  Forward(true, step_seed);
  const double loss = LossAndGradient();
  Backward(step_seed);
  optimizer_->Step();
  logits_hash_valid_ = false;

  const RowStreamStats after = StreamStats();
  const IntermediateStats scratch_after = IntermediateTotals();
  EpochReport report;
  report.epoch = epoch;
  report.time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  report.train_loss = loss;
  report.batches = 1;
  // Reads of the scratch files count as disk reads; their writes are reported apart.
  report.disk_bytes =
      after.bytes_read - before.bytes_read + scratch_after.bytes_read - scratch_before.bytes_read;
  report.disk_reads = after.reads - before.reads + scratch_after.reads - scratch_before.reads;
  report.full_graph = FullGraphStats{scratch_after.bytes_written - scratch_before.bytes_written};
  report.stall_s = after.wait_s - before.wait_s + scratch_after.wait_s - scratch_before.wait_s;
  report.train_busy_s = report.time_s - report.stall_s;
  report.topology_on_disk = !plan_.adjacency_resident;
  return report;
}

void FullGraphRunner::ForEachLogitsChunk(
    const std::function<void(MatrixSpan<const float>, uint64_t)>& fn) {
  // Evaluation logits are reused while the parameters are unchanged (val then test), and
  // recomputed after a step or a restore (the best epoch's parameters).
  const uint64_t hash = ParameterValuesHash(Parameters());
  if (!logits_hash_valid_ || hash != logits_hash_) {
    Forward(false, 0);
    logits_hash_ = hash;
    logits_hash_valid_ = true;
  }
  ColumnSlices& logits = outputs_.back();
  logits.BeginRead();
  ForEachChunk([&](uint64_t begin, uint64_t end) { fn(logits.Read(begin, end), begin); });
  logits.EndRead();
}

double FullGraphRunner::Accuracy(Split split) {
  AccuracyCount total;
  ForEachLogitsChunk([&](MatrixSpan<const float> rows, uint64_t first) {
    const AccuracyCount count = CountCorrect(rows, SplitLabels(split, first, first + rows.rows()));
    total.correct += count.correct;
    total.labelled += count.labelled;
  });
  return total.accuracy();
}

}  // namespace strata
