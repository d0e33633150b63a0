// Layer-wise inference against per-batch evaluation with full neighbourhoods: the same logits
// (within 1e-4) and the same accuracy for GraphSAGE, GCN and GAT, on a generated graph and on
// Cora; the same logits with the activations row-blocked on disk and the topology on disk; only
// the evaluated nodes' in-neighbourhood closure computed; and --eval layerwise scoring a training
// run and a checkpoint as full-neighbourhood batches do.
#include "minibatch/layerwise_inference.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "common/random.h"
#include "minibatch/evaluate.h"
#include "repository_dataset.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/train.h"
#include "test_util.h"

namespace strata {
namespace {

using Logits = std::map<uint64_t, std::vector<float>>;  // by node id

// A small generated SBM, built once per test binary run.
const std::string& SmallSbm() {
  static testing::ScratchDir* dir = new testing::ScratchDir();  // lives for the whole run
  static const std::string path = [] {
    GenerateDataset(testing::SmallGraph(*dir / "sbm", 3000, 24, 4, 6, 9));
    return *dir / "sbm";
  }();
  return path;
}

// The same graph with float16 features.
const std::string& SmallSbmHalf() {
  static testing::ScratchDir* dir = new testing::ScratchDir();  // lives for the whole run
  static const std::string path = [] {
    GenerateOptions o = testing::SmallGraph(*dir / "sbm", 3000, 24, 4, 6, 9);
    o.feature_dtype = FeatureDtype::kFloat16;
    GenerateDataset(o);
    return *dir / "sbm";
  }();
  return path;
}

TrainOptions Options(const std::string& dataset, ModelKind kind) {
  TrainOptions o;
  o.dataset = dataset;
  o.model.kind = kind;
  o.model.layers = 2;
  o.model.hidden = 16;
  o.model.heads = 2;
  o.model.out_heads = 2;
  o.sampling.fanouts = {5, 5};
  o.features.cache_fraction = 0;
  o.memory_budget_bytes = uint64_t{256} << 20;
  o.io_depth = 32;
  o.seed = 7;
  return o;
}

// Every parameter drawn at random, biases included (they start at 0), so that every term of
// every layer shows in the logits.
void Randomise(Session& session) {
  Rng rng(11);
  for (Parameter& p : session.model().model().Parameters()) {
    for (size_t i = 0; i < p.value.rows(); ++i) {
      for (size_t j = 0; j < p.value.cols(); ++j) p.value(i, j) = 0.5f * rng.Normal();
    }
  }
}

Logits PerBatch(Session& session, std::span<const uint64_t> ids) {
  Logits logits;
  std::vector<float> features;
  const uint64_t dim = session.dataset().meta().feature_dim;
  for (size_t first = 0; first < ids.size(); first += 256) {
    const auto seeds = ids.subspan(first, std::min<size_t>(256, ids.size() - first));
    const SampledBatch batch = session.eval_sampler().SampleFullNeighborhood(seeds);
    features.resize(batch.input_nodes().size() * dim);
    session.store().Gather(batch.input_nodes(), features);
    const MatrixSpan<const float> rows = session.model().Predict(batch, features);
    const std::vector<uint64_t> order = batch.seeds();
    for (size_t i = 0; i < order.size(); ++i) {
      logits[order[i]].assign(rows.row(i), rows.row(i) + rows.cols());
    }
  }
  return logits;
}

Logits Layerwise(Session& session, std::span<const uint64_t> ids,
                 const LayerwiseOptions& options = {}, LayerwiseStats* stats = nullptr) {
  Logits logits;
  uint64_t last = 0;
  const LayerwiseStats run =
      RunLayerwise(session, ids, options, [&](std::span<const uint64_t> piece, auto rows) {
        for (size_t i = 0; i < piece.size(); ++i) {
          EXPECT_TRUE(logits.empty() || piece[i] > last) << "ids out of order";
          last = piece[i];
          logits[piece[i]].assign(rows.row(i), rows.row(i) + rows.cols());
        }
      });
  if (stats != nullptr) *stats = run;
  return logits;
}

// Layer-wise inference refuses to run past the session's budget, naming --memory-budget.
void ExpectRefused(Session& session, std::span<const uint64_t> ids,
                   const LayerwiseOptions& options) {
  try {
    Layerwise(session, ids, options);
    FAIL() << "layer-wise inference ran past the budget";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("--memory-budget"), std::string::npos) << e.what();
  }
}

void ExpectClose(const Logits& expected, const Logits& actual) {
  ASSERT_EQ(expected.size(), actual.size());
  for (const auto& [v, row] : expected) {
    const auto it = actual.find(v);
    ASSERT_NE(it, actual.end()) << "node " << v;
    ASSERT_EQ(it->second.size(), row.size());
    for (size_t j = 0; j < row.size(); ++j) {
      ASSERT_NEAR(it->second[j], row[j], 1e-4 * std::max(1.0f, std::abs(row[j])))
          << "node " << v << ", class " << j;
    }
  }
}

std::vector<uint64_t> Union(const Session& session, std::initializer_list<Split> splits) {
  std::vector<uint64_t> ids;
  for (Split split : splits) {
    ids.insert(ids.end(), session.split_ids(split).begin(), session.split_ids(split).end());
  }
  return ids;
}

// Per-batch and layer-wise evaluation of val and test agree on every logit and on the accuracy.
void ExpectLayerwiseMatchesBatches(const TrainOptions& o) {
  SCOPED_TRACE(std::string(ModelKindName(o.model.kind)) + ", " + std::to_string(o.model.layers) +
               " layers");
  Session session(o, Dataset::Open(o.dataset));
  Randomise(session);
  const std::vector<uint64_t> ids = Union(session, {Split::kVal, Split::kTest});
  ExpectClose(PerBatch(session, ids), Layerwise(session, ids));
  for (Split split : {Split::kVal, Split::kTest}) {
    const AccuracyCount batches = EvaluateNodes(session, session.split_ids(split));
    const AccuracyCount layerwise = EvaluateLayerwise(session, {session.split_ids(split)})[0];
    EXPECT_EQ(batches.correct, layerwise.correct);
    EXPECT_EQ(batches.labelled, layerwise.labelled);
    EXPECT_GT(layerwise.labelled, 0u);
  }
}

TEST(LayerwiseInference, MatchesFullNeighbourhoodBatches) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    ExpectLayerwiseMatchesBatches(Options(SmallSbm(), kind));
  }
  // Three layers; GCN without bias on normalised rows; GAT with ELU between layers.
  TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  o.model.layers = 3;
  o.sampling.fanouts = {3, 3, 3};
  ExpectLayerwiseMatchesBatches(o);
  o = Options(SmallSbm(), ModelKind::kGcn);
  o.model.bias = false;
  o.features.row_normalize = true;
  ExpectLayerwiseMatchesBatches(o);
  o = Options(SmallSbm(), ModelKind::kGat);
  o.model.activation = Activation::kElu;
  ExpectLayerwiseMatchesBatches(o);
  o = Options(SmallSbm(), ModelKind::kMlp);
  o.sampling.fanouts = {0, 0};
  ExpectLayerwiseMatchesBatches(o);
}

TEST(LayerwiseInference, MatchesFullNeighbourhoodBatchesOnCora) {
  const std::string cora = testing::RepositoryDataset("cora");
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    TrainOptions o = Options(cora, kind);
    o.features.store = FeatureStoreKind::kMemory;
    o.features.row_normalize = true;
    ExpectLayerwiseMatchesBatches(o);
  }
}

// Layer l is computed for the (L-1-l)-hop in-neighbourhood closure of the evaluated nodes and
// transforms the rows of the (L-l)-hop closure: a few nodes of a large graph cost a few rows.
TEST(LayerwiseInference, ComputesOnlyTheClosureOfTheEvaluatedNodes) {
  const TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  Session session(o, Dataset::Open(o.dataset));
  Randomise(session);
  const std::vector<uint64_t> ids = {2000, 5, 17, 5};
  std::vector<std::set<uint64_t>> closure = {{ids.begin(), ids.end()}};
  for (int hop = 1; hop <= 2; ++hop) {
    std::set<uint64_t> next = closure.back();
    for (uint64_t v : closure.back()) {
      for (uint64_t k = 0; k < session.graph().InDegree(v); ++k) {
        next.insert(session.graph().InNeighbor(v, k));
      }
    }
    closure.push_back(next);
  }
  LayerwiseStats stats;
  ExpectClose(PerBatch(session, std::vector<uint64_t>(closure[0].begin(), closure[0].end())),
              Layerwise(session, ids, {}, &stats));
  EXPECT_EQ(stats.output_rows, (std::vector<uint64_t>{closure[1].size(), 3}));
  EXPECT_EQ(stats.input_rows, (std::vector<uint64_t>{closure[2].size(), closure[1].size()}));
  EXPECT_LT(closure[2].size(), session.graph().num_nodes() / 4);
  EXPECT_FALSE(stats.activations_on_disk);
}

// A budget between what the activations need in memory and as chunk buffers row-blocks them
// in scratch files, with the topology streamed from indices.bin: the same logits. A budget below
// both is one input error naming --memory-budget.
TEST(LayerwiseInference, ActivationsOnDiskGiveTheSameLogits) {
  TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  o.topology.placement = TopologyPlacement::kDisk;
  o.topology.adjacency_cache_bytes = 0;
  LayerwiseOptions small_chunks;
  small_chunks.chunk_rows = 1024;
  std::vector<uint64_t> all(3000);
  std::iota(all.begin(), all.end(), 0);
  Logits expected;
  LayerwiseStats in_memory;
  {
    // Layer-wise first, so that the budget it plans with holds what the later runs' will.
    Session session(o, Dataset::Open(o.dataset));
    Randomise(session);
    const Logits layerwise = Layerwise(session, all, small_chunks, &in_memory);
    expected = PerBatch(session, all);
    ExpectClose(expected, layerwise);
  }
  EXPECT_FALSE(in_memory.activations_on_disk);
  ASSERT_LT(in_memory.budget_on_disk, in_memory.budget_in_memory);

  o.memory_budget_bytes = (in_memory.budget_on_disk + in_memory.budget_in_memory) / 2;
  {
    Session session(o, Dataset::Open(o.dataset));
    Randomise(session);
    LayerwiseStats on_disk;
    ExpectClose(expected, Layerwise(session, all, small_chunks, &on_disk));
    EXPECT_TRUE(on_disk.activations_on_disk);
    // Layer 0's activations and self terms, and the logits, each written and read back, the
    // ReLU's zeros left out (zero_elision.h): less than their floats, in 4 KiB units.
    EXPECT_GT(on_disk.scratch.bytes_written, 0u);
    EXPECT_LT(on_disk.scratch.bytes_written, 3000 * (16 + 16 + 4) * sizeof(float));
    EXPECT_EQ(on_disk.scratch.bytes_read, on_disk.scratch.bytes_written);
    EXPECT_LE(session.budget().peak(), o.memory_budget_bytes);
  }

  // Below that, SAGE runs input-first, GAT is refused.
  o.memory_budget_bytes = in_memory.budget_on_disk - 1;
  {
    Session session(o, Dataset::Open(o.dataset));
    Randomise(session);
    LayerwiseStats input_first;
    ExpectClose(expected, Layerwise(session, all, small_chunks, &input_first));
    EXPECT_GT(input_first.passes[0], 0u);
    EXPECT_LE(session.budget().peak(), o.memory_budget_bytes);
  }
  {
    // Activations as float16 on disk: each hidden value rounded once (relative 2^-11).
    TrainOptions between = o;
    between.memory_budget_bytes = (in_memory.budget_on_disk + in_memory.budget_in_memory) / 2;
    Session session(between, Dataset::Open(o.dataset));
    Randomise(session);
    LayerwiseOptions half = small_chunks;
    half.half_on_disk = true;
    LayerwiseStats stats;
    const Logits logits = Layerwise(session, all, half, &stats);
    EXPECT_TRUE(stats.activations_on_disk);
    double worst = 0;
    for (const auto& [v, row] : expected) {
      for (size_t j = 0; j < row.size(); ++j) {
        worst = std::max<double>(
            worst, std::abs(logits.at(v)[j] - row[j]) / std::max(1.0f, std::abs(row[j])));
      }
    }
    EXPECT_GT(worst, 0);
    EXPECT_LT(worst, 1e-2);
  }
  o.model.kind = ModelKind::kGat;
  Session session(o, Dataset::Open(o.dataset));
  ExpectRefused(session, all, small_chunks);
}

// Input-first layers (where not even the transformed rows fit), each range of destinations one
// pass over the layer's input: the same logits as full-neighbourhood batches for SAGE and GCN,
// in one pass or many, with the activations in memory or on disk; a budget that cannot hold
// one destination's sums beside the chunk buffers is an input error.
TEST(LayerwiseInference, InputFirstGivesTheSameLogits) {
  std::vector<uint64_t> all(3000);
  std::iota(all.begin(), all.end(), 0);
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn}) {
    for (size_t layers : {2, 3}) {
      TrainOptions o = Options(SmallSbm(), kind);
      o.model.layers = layers;
      o.sampling.fanouts.assign(layers, 3);
      // Normalised rows: also SAGE's own rows, which its input layer reads again after a pass.
      o.features.row_normalize = kind == ModelKind::kGcn || layers == 3;
      o.model.bias = layers == 2;
      SCOPED_TRACE(std::string(ModelKindName(kind)) + ", " + std::to_string(layers) + " layers");
      Session session(o, Dataset::Open(o.dataset));
      Randomise(session);
      const std::vector<uint64_t> ids = {2000, 5, 17, 5, 2999, 1024};
      const Logits expected = PerBatch(session, all);
      LayerwiseOptions input_first;
      input_first.input_first = true;
      LayerwiseStats stats;
      ExpectClose(expected, Layerwise(session, all, input_first, &stats));
      EXPECT_EQ(stats.passes, std::vector<uint64_t>(layers, 1));
      input_first.max_range_rows = 700;
      input_first.chunk_rows = 1024;
      ExpectClose(expected, Layerwise(session, all, input_first, &stats));
      EXPECT_EQ(stats.passes[0], 5u);  // 3000 destinations, 700 a pass
      Logits some;
      for (uint64_t v : ids) some[v] = expected.at(v);
      ExpectClose(some, Layerwise(session, ids, input_first, &stats));
      EXPECT_FALSE(stats.activations_on_disk);
    }
  }
  {
    // float16 features, read again for SAGE's own rows.
    TrainOptions o = Options(SmallSbmHalf(), ModelKind::kSage);
    Session session(o, Dataset::Open(o.dataset));
    Randomise(session);
    LayerwiseOptions input_first;
    input_first.input_first = true;
    input_first.max_range_rows = 700;
    ExpectClose(PerBatch(session, all), Layerwise(session, all, input_first));
  }
  TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  o.memory_budget_bytes = Session(o, Dataset::Open(o.dataset)).budget().used() + (64 << 10);
  Session session(o, Dataset::Open(o.dataset));
  LayerwiseOptions input_first;
  input_first.input_first = true;
  ExpectRefused(session, all, input_first);
}

// Layer-wise evaluation runs with no batch in flight, so it takes the batches' reserve and the
// model's planned bytes its buffers have not grown into: it runs where what the budget has free
// would refuse it, scores as it does with room to spare, and leaves both charged again.
TEST(LayerwiseEvaluation, TakesTheTrainingMemory) {
  TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  o.sampling.fanouts = {-1, -1};
  o.sampling.batch_size = 3000;
  Session session(o, Dataset::Open(o.dataset));
  Randomise(session);
  const std::vector<uint64_t>& val = session.split_ids(Split::kVal);
  const AccuracyCount roomy = EvaluateLayerwise(session, {val})[0];
  MemoryBudget& budget = session.budget();
  const uint64_t charged = budget.used();
  session.LendTrainingMemory();
  const uint64_t lent = charged - budget.used();
  session.ReclaimTrainingMemory();
  EXPECT_EQ(budget.used(), charged);
  const uint64_t reserve = session.memory_plan().batch_reserve_bytes;
  ASSERT_GT(lent, reserve);  // the model lends too
  const LayerwiseOptions options = LayerwiseOptionsOf(session);
  const uint64_t least =
      SizeLayerwise(session, session.model().config(), val, options).least_bytes();
  // What is free leaves evaluation short of the least it runs in by more than the reserve.
  const uint64_t short_by = (reserve + lent) / 2;
  ASSERT_LT(short_by, least);
  const uint64_t taken = budget.available() - (least - short_by);
  budget.Charge(taken, "the test");
  const HeldCharge hold(budget, taken);
  const uint64_t used = budget.used();
  ExpectRefused(session, val, options);
  const AccuracyCount tight = EvaluateLayerwise(session, {val})[0];
  EXPECT_EQ(tight.correct, roomy.correct);
  EXPECT_EQ(tight.labelled, roomy.labelled);
  EXPECT_GT(tight.labelled, 0u);
  EXPECT_EQ(budget.used(), used);
}

// Partition-based multistage training samples inside its macro-batches and layer-wise
// evaluation streams the lists in order, so the topology on disk gets no adjacency cache unless
// one is asked for; sampled evaluation and LBS, which sample the whole graph, keep the default.
TEST(LayerwiseEvaluation, NoAdjacencyCacheWhereNothingSamplesTheWholeGraph) {
  TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  o.topology.placement = TopologyPlacement::kDisk;
  auto cached_nodes = [&](MultistageMethod method, EvalMode eval, int64_t cache_bytes) {
    o.multistage.method = method;
    o.eval = eval;
    o.topology.adjacency_cache_bytes = cache_bytes;
    Session session(o, Dataset::Open(o.dataset));
    return session.graph().adjacency_stats().cached_nodes;
  };
  EXPECT_EQ(cached_nodes(MultistageMethod::kPartition, EvalMode::kLayerwise, -1), 0u);
  EXPECT_EQ(cached_nodes(MultistageMethod::kPbs, EvalMode::kNone, -1), 0u);
  EXPECT_GT(cached_nodes(MultistageMethod::kPartition, EvalMode::kSampled, -1), 0u);
  EXPECT_GT(cached_nodes(MultistageMethod::kPartition, EvalMode::kLayerwise, 1 << 20), 0u);
  EXPECT_GT(cached_nodes(MultistageMethod::kLargeBatch, EvalMode::kLayerwise, -1), 0u);
  EXPECT_GT(cached_nodes(MultistageMethod::kNone, EvalMode::kLayerwise, -1), 0u);
}

// --eval layerwise scores every epoch and the final model as full-neighbourhood batches do, and
// trains the same; a checkpoint scores the same either way; sampled evaluation fanouts are
// refused with it.
TEST(LayerwiseEvaluation, TrainingAndCheckpointScoreLikeFullNeighbourhoodBatches) {
  testing::ScratchDir dir;
  TrainOptions o = Options(SmallSbm(), ModelKind::kSage);
  o.features.cache_fraction = -1;
  o.epochs = 4;
  o.sampling.batch_size = 64;
  o.checkpoint_dir = dir / "ckpt";
  const TrainResult batches = Train(o);
  o.eval = EvalMode::kLayerwise;
  const TrainResult layerwise = Train(o);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(layerwise.epochs[e].train_loss, batches.epochs[e].train_loss);
    EXPECT_EQ(layerwise.epochs[e].val_acc, batches.epochs[e].val_acc);
  }
  EXPECT_EQ(layerwise.test_acc, batches.test_acc);
  EXPECT_GT(layerwise.test_acc, 0.4);  // 4 classes: it learned something

  const EvalResult checkpoint_layerwise = EvaluateCheckpoint(o);
  o.eval = EvalMode::kSampled;
  const EvalResult checkpoint_batches = EvaluateCheckpoint(o);
  EXPECT_EQ(checkpoint_layerwise.val_acc, checkpoint_batches.val_acc);
  EXPECT_EQ(checkpoint_layerwise.test_acc, checkpoint_batches.test_acc);
  EXPECT_EQ(checkpoint_layerwise.test_acc, layerwise.test_acc);

  o.eval = EvalMode::kLayerwise;
  o.sampling.eval_fanouts = {5, 5};
  EXPECT_THROW(Train(o), Error);
}

}  // namespace
}  // namespace strata
