#include "multistage/large_batch_loader.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "common/random.h"
#include "features/direct_feature_store.h"
#include "multistage/macro_batch_size.h"
#include "strata/error.h"

namespace strata {
namespace {

constexpr uint64_t kFirstStageStream = 0x6c62730000000000ull;  // "lbs"

// A later macro-batch may sample a few more rows than the trial did; the buffers are sized
// with this margin so that they rarely grow.
constexpr double kRowMargin = 1.1;

// Bytes of a macro-batch's graphs and id maps besides its rows: an offset per node and layer,
// three map entries per node, a local id per edge.
uint64_t GraphBytes(uint64_t rows, uint64_t edges, uint64_t layers) {
  return (rows + 1) * 8 * layers + rows * 24 + edges * 4;
}

// A macro-batch's bytes with `rows` input rows and `edges` sampled edges: its rows with a
// margin, graphs and maps.
uint64_t MacroBatchBytes(uint64_t rows, uint64_t edges, uint64_t layers, uint64_t dim) {
  const uint64_t margin_rows = static_cast<uint64_t>(static_cast<double>(rows) * kRowMargin);
  return margin_rows * dim * sizeof(float) + GraphBytes(rows, edges, layers);
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

DirectStoreOptions LoaderStoreOptions(const TrainOptions& options) {
  DirectStoreOptions direct;
  direct.io.depth = std::max<uint32_t>(options.io_depth, 1);
  direct.max_read_bytes = options.features.max_read_bytes;
  return direct;
}

LargeBatchLoader::LargeBatchLoader(const Dataset& dataset, const CscGraph& graph,
                                   const std::vector<uint64_t>& train_ids,
                                   const TrainOptions& options, MemoryBudget& budget)
    : graph_(graph), options_(options), budget_(budget), dim_(dataset.meta().feature_dim) {
  store_ =
      OpenFeatureStore(dataset, FeatureStoreKind::kDirect, LoaderStoreOptions(options), budget);

  const uint64_t batch = std::max<uint64_t>(options.sampling.batch_size, 1);
  // At most a rank's share of the mini-batches, so that every rank gets a macro-batch.
  const uint64_t ranks = std::max<uint32_t>(options.multistage.world_size, 1);
  const uint32_t most =
      static_cast<uint32_t>(std::max<uint64_t>((train_ids.size() + batch - 1) / batch / ranks, 1));
  std::vector<uint32_t> sizes;
  for (uint32_t n = 1; n < most; n *= 2) sizes.push_back(n);
  sizes.push_back(most);
  // Each trial samples the size's first macro-batch; sizing asks for a size more than once.
  std::map<uint32_t, Trial> trials;
  auto trial = [&](uint32_t n) -> const Trial& {
    auto it = trials.find(n);
    return it != trials.end() ? it->second
                              : trials.emplace(n, RunTrial(train_ids, n)).first->second;
  };
  macro_batch_ = ChooseMacroBatch(options.multistage.macro_batch, sizes,
                                  [&](uint32_t n) { return 2 * trial(n).bytes; }, budget,
                                  {"--multistage lbs", "mini-batch", "lower --batch-size"});
  first_stage_ = std::make_unique<NeighborSampler>(
      graph, train_ids, options.sampling.fanouts, batch * macro_batch_,
      MixSeed(options.seed, kFirstStageStream), budget, options.threads);
  const uint64_t rows = trial(macro_batch_).rows;
  const uint64_t reserve = std::min<uint64_t>(
      graph.num_nodes(), static_cast<uint64_t>(static_cast<double>(rows) * kRowMargin) + 1);
  for (int buffer : {0, 1}) Reserve(buffer, reserve);
}

LargeBatchLoader::~LargeBatchLoader() = default;

uint64_t LargeBatchLoader::LeastBytes(const Dataset& dataset, const TrainOptions& options,
                                      const BatchBound& largest_batch) {
  uint64_t edges = 0;
  for (const BlockShape& layer : largest_batch.layers) edges += layer.edges;
  const DirectStoreOptions store = LoaderStoreOptions(options);
  const DatasetMeta& meta = dataset.meta();
  // Two buffers of one mini-batch's macro-batch in half of what the store leaves.
  return DirectStoreReadBytes(meta, store.io.depth, store.max_read_bytes) +
         4 * MacroBatchBytes(largest_batch.input_rows(), edges, largest_batch.layers.size(),
                             meta.feature_dim);
}

LargeBatchLoader::Trial LargeBatchLoader::RunTrial(const std::vector<uint64_t>& train_ids,
                                                   uint32_t macro_batch) const {
  const uint64_t batch = std::max<uint64_t>(options_.sampling.batch_size, 1);
  const NeighborSampler sampler(graph_, train_ids, options_.sampling.fanouts, batch * macro_batch,
                                MixSeed(options_.seed, kFirstStageStream), budget_,
                                options_.threads);
  const SampledBatch sample = sampler.Sample(0, 0);
  Trial trial;
  trial.rows = sample.input_nodes().size();
  trial.bytes = MacroBatchBytes(trial.rows, SampledEdges(sample), sample.blocks.size(), dim_);
  return trial;
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

std::vector<uint64_t> LargeBatchLoader::seeds_per_macro_batch(uint64_t epoch) const {
  // The first stage's batches take macro_batch mini-batches of seeds each, the last the rest.
  const uint64_t seeds = first_stage_->seeds_per_epoch();
  const uint64_t per = std::max<uint64_t>(options_.sampling.batch_size, 1) * macro_batch_;
  std::vector<uint64_t> counts(macro_batches(epoch));
  for (uint64_t m = 0; m < counts.size(); ++m) counts[m] = std::min(per, seeds - m * per);
  return counts;
}

std::unique_ptr<MacroBatch> LargeBatchLoader::Load(uint64_t epoch, uint64_t m, int buffer) {
  SampledBatch sample = first_stage_->Sample(epoch, m);
  // The sample's input nodes become the macro-batch's ids (not copied: up to millions).
  auto batch = std::make_unique<MacroBatch>();
  batch->global_of = std::move(sample.blocks.front().src_nodes);
  const std::vector<uint64_t>& nodes = batch->global_of;
  batch->buffer = buffer;
  batch->row_dtype = FeatureDtype::kFloat32;
  batch->train_local.resize(sample.blocks.back().num_dst());
  std::iota(batch->train_local.begin(), batch->train_local.end(), 0);
  for (const Block& block : sample.blocks) {
    batch->graphs.push_back(LayerGraph(block, nodes.size(), budget_));
  }
  batch->maps_charge = std::make_unique<TrackedCharge>(budget_, "macro-batch id maps");
  batch->maps_charge->Update(batch->global_of.size() * 16 + batch->train_local.size() * 8);
  if (graph_built_) graph_built_(*batch);
  // Ahead of time, only the rows the mini-batches use; they keep their order.
  std::vector<uint64_t> read;
  if (batch->input_rows) {
    read.reserve(batch->input_rows->size());
    for (uint64_t local : *batch->input_rows) read.push_back(nodes[local]);
    batch->aot_bytes_saved = (nodes.size() - read.size()) * dim_ * sizeof(float);
  }
  const std::vector<uint64_t>& gathered = batch->input_rows ? read : nodes;
  float* rows = Reserve(buffer, gathered.size());
  const uint64_t read_before = store_->stats().bytes_read;
  store_->Gather(gathered, {rows, gathered.size() * dim_});
  batch->bytes_read = store_->stats().bytes_read - read_before;
  batch->row_of.assign(nodes.size(), nullptr);
  for (size_t i = 0; i < gathered.size(); ++i) {
    const uint64_t local = batch->input_rows ? (*batch->input_rows)[i] : i;
    batch->row_of[local] = reinterpret_cast<const std::byte*>(rows + i * dim_);
  }
  return batch;
}

}  // namespace strata
