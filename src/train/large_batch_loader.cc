#include "train/large_batch_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "common/random.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kFirstStageStream = 0x6c62730000000000ull;  // "lbs"

// A later macro-batch may sample a few more rows than the trial did; the buffers are sized
// with this margin so that they rarely grow.
constexpr double kRowMargin = 1.1;

std::string FormatMiB(uint64_t bytes) { return fmt::format("{:.1f} MiB", bytes / 1048576.0); }

// Bytes of a macro-batch's graphs and id maps besides its rows: an offset per node and layer,
// three map entries per node, a local id per edge.
uint64_t GraphBytes(uint64_t rows, uint64_t edges, uint64_t layers) {
  return (rows + 1) * 8 * layers + rows * 24 + edges * 4;
}

uint64_t SampledEdges(const SampledBatch& batch) {
  uint64_t edges = 0;
  for (const Block& block : batch.blocks) edges += block.num_edges();
  return edges;
}

// Layer l's edges of the sample as a graph over all its nodes, in the input layer's local ids
// (a layer's source ids are a prefix of the layer below's): the destinations keep their picks,
// in the block's order; the other nodes have none.
std::unique_ptr<CscGraph> LayerGraph(const Block& block, uint64_t nodes, MemoryBudget& budget) {
  ChargedArray<uint64_t> indptr(budget, nodes + 1, "macro-batch graph");
  std::copy(block.indptr.begin(), block.indptr.end(), indptr.data());
  std::fill(indptr.data() + block.num_dst() + 1, indptr.data() + nodes + 1, block.num_edges());
  ChargedArray<uint32_t> indices(budget, block.num_edges(), "macro-batch graph");
  std::copy(block.indices.begin(), block.indices.end(), indices.data());
  return std::make_unique<CscGraph>(std::move(indptr), std::move(indices), budget);
}

}  // namespace

LargeBatchLoader::LargeBatchLoader(const Dataset& dataset, const CscGraph& graph,
                                   const std::vector<uint64_t>& train_ids,
                                   const TrainOptions& options, MemoryBudget& budget)
    : graph_(graph), options_(options), budget_(budget), dim_(dataset.meta().feature_dim) {
  DirectStoreOptions direct;
  direct.io.depth = std::max<uint32_t>(options.io_depth, 1);
  direct.max_read_bytes = options.features.max_read_bytes;
  store_ = OpenFeatureStore(dataset, FeatureStoreKind::kDirect, direct, budget);

  const uint64_t batch = std::max<uint64_t>(options.sampling.batch_size, 1);
  const uint64_t most = std::max<uint64_t>((train_ids.size() + batch - 1) / batch, 1);
  // Half of what is left goes to the two macro-batches; the model, the batches in flight and
  // evaluation need the rest.
  const uint64_t room = budget.available() / 2;
  uint64_t rows = 0;
  // The largest power of two that fits (0 if none), and its trial's rows.
  auto largest_fit = [&] {
    uint32_t fits = 0;
    for (uint64_t m = 1;; m = std::min(most, 2 * m)) {
      uint64_t trial_rows = 0;
      if (2 * TrialBytes(train_ids, static_cast<uint32_t>(m), trial_rows) > room) break;
      fits = static_cast<uint32_t>(m);
      rows = trial_rows;
      if (m == most) break;
    }
    return fits;
  };
  uint32_t macro_batch = options.multistage.macro_batch;
  if (macro_batch == 0) {
    macro_batch = largest_fit();
    if (macro_batch == 0) {
      throw Error::Input(fmt::format(
          "the memory budget is too small for --multistage lbs: two macro-batches of one "
          "mini-batch need {}, half of what the budget leaves is {}; raise --memory-budget or "
          "lower --batch-size",
          FormatMiB(2 * TrialBytes(train_ids, 1, rows)), FormatMiB(room)));
    }
  } else {
    macro_batch = static_cast<uint32_t>(std::min<uint64_t>(macro_batch, most));
    const uint64_t bytes = 2 * TrialBytes(train_ids, macro_batch, rows);
    if (bytes > room) {
      const uint32_t fits = largest_fit();
      throw Error::Input(fmt::format(
          "--macro-batch {} needs {} for its two macro-batches, half of what the budget leaves "
          "is {}: {}",
          macro_batch, FormatMiB(bytes), FormatMiB(room),
          fits ? fmt::format("--macro-batch {} fits", fits) : "raise --memory-budget"));
    }
  }
  macro_batch_ = macro_batch;
  first_stage_ = std::make_unique<NeighborSampler>(
      graph, train_ids, options.sampling.fanouts, batch * macro_batch_,
      MixSeed(options.seed, kFirstStageStream), budget, options.threads);
  const uint64_t reserve = std::min<uint64_t>(
      graph.num_nodes(), static_cast<uint64_t>(static_cast<double>(rows) * kRowMargin) + 1);
  for (int buffer : {0, 1}) Reserve(buffer, reserve);
}

LargeBatchLoader::~LargeBatchLoader() = default;

uint64_t LargeBatchLoader::TrialBytes(const std::vector<uint64_t>& train_ids, uint32_t macro_batch,
                                      uint64_t& rows) const {
  const uint64_t batch = std::max<uint64_t>(options_.sampling.batch_size, 1);
  const NeighborSampler trial(graph_, train_ids, options_.sampling.fanouts, batch * macro_batch,
                              MixSeed(options_.seed, kFirstStageStream), budget_, options_.threads);
  const SampledBatch sample = trial.Sample(0, 0);
  rows = sample.input_nodes().size();
  const uint64_t margin_rows = static_cast<uint64_t>(static_cast<double>(rows) * kRowMargin);
  return margin_rows * dim_ * sizeof(float) +
         GraphBytes(rows, SampledEdges(sample), sample.blocks.size());
}

float* LargeBatchLoader::Reserve(int buffer, uint64_t rows) {
  ChargedArray<float>& slot = buffers_[buffer];
  if (slot.size() < rows * dim_) {
    slot = ChargedArray<float>();  // the old one is released before the larger is charged
    slot = ChargedArray<float>(budget_, rows * dim_, "macro-batch buffers");
  }
  return slot.data();
}

uint64_t LargeBatchLoader::macro_batches(uint64_t epoch) const {
  return first_stage_->batches_per_epoch();
}

std::unique_ptr<MacroBatch> LargeBatchLoader::Load(uint64_t epoch, uint64_t m, int buffer) {
  const SampledBatch sample = first_stage_->Sample(epoch, m);
  const std::vector<uint64_t>& nodes = sample.input_nodes();
  auto batch = std::make_unique<MacroBatch>();
  batch->buffer = buffer;
  batch->row_dtype = FeatureDtype::kFloat32;
  float* rows = Reserve(buffer, nodes.size());
  const uint64_t read_before = store_->stats().bytes_read;
  store_->Gather(nodes, {rows, nodes.size() * dim_});
  batch->bytes_read = store_->stats().bytes_read - read_before;
  batch->global_of = nodes;
  batch->row_of.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    batch->row_of[i] = reinterpret_cast<const std::byte*>(rows + i * dim_);
  }
  batch->train_local.resize(sample.blocks.back().num_dst());
  std::iota(batch->train_local.begin(), batch->train_local.end(), 0);
  for (const Block& block : sample.blocks) {
    batch->graphs.push_back(LayerGraph(block, nodes.size(), budget_));
  }
  batch->maps_charge = std::make_unique<TrackedCharge>(budget_, "macro-batch id maps");
  batch->maps_charge->Update(batch->global_of.size() * 16 + batch->train_local.size() * 8);
  return batch;
}

}  // namespace strata
