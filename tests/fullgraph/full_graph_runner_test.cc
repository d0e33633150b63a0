// Full-graph GCN, GraphSAGE and GAT training, on dense and on sparse (CSR) features and (GCN and
// SAGE) on a directed graph: the same losses whatever the budget (resident, features streamed, both
// streamed), the budget never exceeded, gradients against finite differences, a model the
// mini-batch evaluation reads, the mini-batch path's logits on Cora, and clear errors for a small
// budget or a truncated file.
#include "fullgraph/full_graph_runner.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <numeric>
#include <set>

#include "common/random.h"
#include "minibatch/session.h"
#include "repository_dataset.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/import.h"
#include "strata/npy.h"
#include "strata/train.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::ScratchDir;

// A directed graph (each edge in one direction only, so Âᵀ differs from Â), its labels
// following node ids and its features noisy one-hot labels, imported from NumPy arrays.
void ImportDirectedGraph(const std::string& npy_dir, const std::string& out) {
  constexpr uint64_t kNodes = 3000, kDim = 32, kClasses = 4;
  std::filesystem::create_directories(npy_dir);
  Rng rng(11);
  std::vector<int64_t> sources, destinations;
  for (uint64_t v = 0; v < kNodes; ++v) {
    for (int k = 0; k < 6; ++k) {
      const uint64_t u = rng.Next() % kNodes;
      if (u == v) continue;
      sources.push_back(static_cast<int64_t>(std::min(u, v)));  // low ids point to high ones
      destinations.push_back(static_cast<int64_t>(std::max(u, v)));
    }
  }
  std::vector<int64_t> edge_index = sources;
  edge_index.insert(edge_index.end(), destinations.begin(), destinations.end());
  std::vector<float> features(kNodes * kDim);
  std::vector<int64_t> labels(kNodes), train, val, test;
  for (uint64_t v = 0; v < kNodes; ++v) {
    labels[v] = static_cast<int64_t>(v * kClasses / kNodes);
    for (uint64_t j = 0; j < kDim; ++j) {
      features[v * kDim + j] = (j % kClasses == static_cast<uint64_t>(labels[v]) ? 0.5f : 0.0f) +
                               static_cast<float>(rng.Next() % 1000) / 1000.0f;
    }
    (v % 10 < 6 ? train : v % 10 < 8 ? val : test).push_back(static_cast<int64_t>(v));
  }
  auto write = [&](const std::string& name, NpyDtype dtype, std::vector<uint64_t> shape,
                   const void* data) { WriteNpy(npy_dir + "/" + name, dtype, shape, data); };
  write("edge_index.npy", NpyDtype::kInt64, {2, sources.size()}, edge_index.data());
  write("features.npy", NpyDtype::kFloat32, {kNodes, kDim}, features.data());
  write("labels.npy", NpyDtype::kInt64, {kNodes}, labels.data());
  write("train_idx.npy", NpyDtype::kInt64, {train.size()}, train.data());
  write("val_idx.npy", NpyDtype::kInt64, {val.size()}, val.data());
  write("test_idx.npy", NpyDtype::kInt64, {test.size()}, test.data());
  ImportOptions options;
  options.out = out;
  options.memory_budget_bytes = uint64_t{64} << 20;
  ImportNpyDirectory(npy_dir, options);
}

// A copy of the sparse dataset at `from` whose feature values are 0.5, 1, 1.5 or 2 in turn
// rather than all 1 (the meta's digests are not checked on open).
void WeighValues(const std::string& from, const std::string& to) {
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
  const std::string path = to + "/features/values.bin";
  std::vector<float> values(std::filesystem::file_size(path) / sizeof(float));
  for (size_t k = 0; k < values.size(); ++k) values[k] = 0.5f * static_cast<float>(1 + k % 4);
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(values.data()),
             static_cast<std::streamsize>(values.size() * sizeof(float)));
}

// The parameter names the dataset: "dense" (64 Gaussian features), "sparse" (2% of 400
// bag-of-words features, CSR, their values all 1: only their ids are read), "weighted" (the
// same with values other than 1: ids and values read, WeighValues) or "directed"
// (ImportDirectedGraph); with "_sage" or "_gat", the model is GraphSAGE or GAT (2 heads of 8,
// the logits' 2 heads averaged, attention dropout 0.3) rather than GCN.
class FullGraphTest : public ::testing::TestWithParam<const char*> {
 protected:
  static void SetUpTestSuite() {
    dir_ = new ScratchDir;
    GenerateDataset(testing::SmallGraph(*dir_ / "dense", 3000, 64, 4, 12, 8));
    GenerateOptions sparse = testing::SmallGraph(*dir_ / "sparse", 3000, 400, 4, 12, 8);
    sparse.feature_density = 0.02;
    GenerateDataset(sparse);
    WeighValues(*dir_ / "sparse", *dir_ / "weighted");
    ImportDirectedGraph(*dir_ / "directed-npy", *dir_ / "directed");
  }
  static std::string DatasetName() {
    const std::string param = GetParam();
    return param.substr(0, param.find('_'));
  }
  static bool SparseFeatures() { return DatasetName() == "sparse" || DatasetName() == "weighted"; }
  static bool Sage() { return std::string(GetParam()).ends_with("_sage"); }
  static bool Gat() { return std::string(GetParam()).ends_with("_gat"); }
  static std::string Path() { return *dir_ / DatasetName(); }
  static void TearDownTestSuite() { delete dir_; }

  static TrainOptions Options(uint64_t budget) {
    TrainOptions o;
    o.dataset = Path();
    o.full_graph = true;
    o.model.kind = Sage() ? ModelKind::kSage : Gat() ? ModelKind::kGat : ModelKind::kGcn;
    o.model.hidden = Gat() ? 8 : 16;
    o.model.heads = 2;
    o.model.out_heads = 2;
    o.model.attention_dropout = 0.3;
    o.model.input_dropout = 0.5;
    o.model.bias = false;
    o.optimizer.lr = 0.01;
    o.optimizer.weight_decay = 5e-4;
    o.memory_budget_bytes = budget;
    o.seed = 4;
    o.io_depth = 8;
    // Three chunks of the 3000 nodes, so that row-blocked intermediates change chunks.
    o.full_graph_chunk_rows = 1024;
    o.scratch_dir = dir_->path();
    return o;
  }

  void ExpectGradientsMatchFiniteDifferences(const TrainOptions& o, size_t layers);

  static ScratchDir* dir_;
};

ScratchDir* FullGraphTest::dir_ = nullptr;

struct BudgetSweep {
  std::set<std::pair<bool, bool>> plans;  // (adjacency resident, features resident)
  bool intermediates_on_disk = false;
  std::set<size_t> slices;  // the propagation input's slice counts
  uint64_t smallest = 0;    // the smallest budget that worked
};

// Trains 4 epochs with the options `options` makes, in memory and unsliced, and then at every
// budget from `largest` down to the smallest that works in steps of `step`, with the RoBW plan
// and with MaxMemory: every plan on the way trains the resident run's losses and accuracy
// within its budget.
BudgetSweep SweepBudgets(const std::function<TrainOptions(uint64_t)>& options,
                         const std::string& path, uint64_t step,
                         uint64_t largest = uint64_t{3} << 20) {
  auto losses = [](FullGraphRunner& runner) {
    std::vector<double> losses;
    for (int e = 0; e < 4; ++e) losses.push_back(runner.TrainEpoch(e).train_loss);
    return losses;
  };
  TrainOptions whole = options(uint64_t{64} << 20);
  whole.full_graph_slices = 0;
  FullGraphRunner resident(whole, Dataset::Open(path));
  EXPECT_TRUE(resident.plan().adjacency_resident && resident.plan().features_resident);
  EXPECT_FALSE(resident.plan().intermediates_on_disk);
  const std::vector<double> expected = losses(resident);
  const double accuracy = resident.Accuracy(Split::kVal);
  BudgetSweep sweep;
  for (uint64_t budget = largest;; budget -= step) {
    std::unique_ptr<FullGraphRunner> runner;
    try {
      runner = std::make_unique<FullGraphRunner>(options(budget), Dataset::Open(path));
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("the smallest budget that works is"), std::string::npos)
          << e.what();
      break;
    }
    SCOPED_TRACE(budget);
    const FullGraphPlan& plan = runner->plan();
    sweep.plans.insert({plan.adjacency_resident, plan.features_resident});
    sweep.intermediates_on_disk |= plan.intermediates_on_disk;
    sweep.slices.insert(plan.slices);
    sweep.smallest = budget;
    EXPECT_EQ(losses(*runner), expected);
    EXPECT_EQ(runner->Accuracy(Split::kVal), accuracy);
    EXPECT_LE(runner->budget().peak(), budget);
    // The MaxMemory baseline's plan (resident prefixes, synchronous reads) trains the same.
    TrainOptions max_memory = options(budget);
    max_memory.full_graph_max_memory = true;
    FullGraphRunner baseline(max_memory, Dataset::Open(path));
    EXPECT_EQ(losses(baseline), expected);
    EXPECT_LE(baseline.budget().peak(), budget);
  }
  return sweep;
}

TEST_P(FullGraphTest, SameLossesWhateverTheBudget) {
  FullGraphRunner resident(Options(uint64_t{64} << 20), Dataset::Open(Path()));
  EXPECT_EQ(resident.plan().symmetric, DatasetName() != "directed");
  EXPECT_EQ(resident.plan().unit_values, DatasetName() == "sparse");
  const BudgetSweep sweep = SweepBudgets(Options, Path(), 16 << 10);
  EXPECT_TRUE(sweep.plans.contains({true, false})) << "the features were never streamed";
  // Sparse SAGE's and GAT's models (SAGE's W_self and W_neigh of 400 × 16, GAT's 400 × 16 and
  // its wider intermediates, with their gradients, Adam's moments and the best-epoch copy) leave
  // room for the small adjacency even at the smallest budget; so do features whose values are
  // all 1, streamed through the buffers of one file rather than two.
  if (!SparseFeatures() || (DatasetName() == "weighted" && !Sage() && !Gat())) {
    EXPECT_TRUE(sweep.plans.contains({false, false})) << "the adjacency was never streamed";
  }
  EXPECT_TRUE(sweep.intermediates_on_disk) << "the intermediates were never row-blocked on disk";
}

// Three layers with ELU and hidden dropout: hidden-to-hidden products and gradients, and
// masks drawn per chunk, on disk as in memory.
TEST_P(FullGraphTest, DeeperEluModelSameLossesWhateverTheBudget) {
  auto options = [](uint64_t budget) {
    TrainOptions o = Options(budget);
    o.model.layers = 3;
    o.model.hidden = 12;
    o.model.dropout = 0.3;
    o.model.activation = Activation::kElu;
    o.model.bias = true;
    return o;
  };
  // GAT's 3 layers of 2 heads keep more, and larger, intermediates.
  const BudgetSweep sweep =
      SweepBudgets(options, Path(), 96 << 10, Gat() ? uint64_t{6} << 20 : uint64_t{3} << 20);
  EXPECT_TRUE(sweep.intermediates_on_disk) << "the intermediates were never row-blocked on disk";
  if (Gat()) return;  // never sliced
  // Sliced into 4 slices of 3 columns (hidden), and the 4 logits into 2.
  auto sliced = [&](uint64_t budget) {
    TrainOptions o = options(budget);
    o.full_graph_slices = 4;
    return o;
  };
  EXPECT_EQ(SweepBudgets(sliced, Path(), 384 << 10).slices, std::set<size_t>{4});
}

// Column-sliced propagation asked for: 2 and 3 slices of the 16 hidden columns, and 16 (the 4
// logits too), at every budget train the unsliced resident run's losses. GAT, with 3 heads a
// hidden layer, in groups of 2 + 1 and of 1 head (its averaged logits whole); more groups than
// heads is one clear error.
TEST_P(FullGraphTest, SlicedPropagationSameLossesWhateverTheBudget) {
  auto gat_heads = [](TrainOptions o) {
    if (Gat()) o.model.heads = 3;
    return o;
  };
  if (Gat()) {
    TrainOptions o = gat_heads(Options(uint64_t{64} << 20));
    o.full_graph_slices = 4;
    EXPECT_THROW(FullGraphRunner(o, Dataset::Open(Path())), Error);
  }
  for (uint32_t slices : Gat() ? std::vector<uint32_t>{2, 3} : std::vector<uint32_t>{2, 3, 16}) {
    SCOPED_TRACE(slices);
    auto options = [slices, gat_heads](uint64_t budget) {
      TrainOptions o = gat_heads(Options(budget));
      o.full_graph_slices = slices;
      return o;
    };
    // GAT's intermediates per group make its floor higher.
    const BudgetSweep sweep =
        SweepBudgets(options, Path(), 256 << 10, (Gat() ? uint64_t{6} : uint64_t{3}) << 20);
    EXPECT_EQ(sweep.slices, std::set<size_t>{slices});
    EXPECT_LT(sweep.smallest, (Gat() ? uint64_t{5} : uint64_t{3}) << 20);
  }
}

// A graph shorter than one chunk (the intermediates' buffers then hold its rows only), sliced
// at every budget, trains the losses of the resident run with that chunk.
TEST_P(FullGraphTest, AGraphShorterThanAChunkSlicesToTheSameLosses) {
  auto options = [](uint64_t budget) {
    TrainOptions o = Options(budget);
    o.full_graph_chunk_rows = 4096;
    o.full_graph_slices = 2;
    return o;
  };
  const BudgetSweep sweep = SweepBudgets(options, Path(), 512 << 10, uint64_t{8} << 20);
  EXPECT_EQ(sweep.slices, std::set<size_t>{2});
  EXPECT_TRUE(sweep.intermediates_on_disk);
}

// dL/dw from the backward pass against central differences of the loss (step 3e-3: at 1e-2 the
// curvature of sparse SAGE's loss in a bias moved the difference by 10%), with dropout off (GAT's
// attention dropout on: the masks of the epoch every difference repeats) and a learning rate
// too small to move a float.
// Two layers with ReLU, and three with ELU.
TEST_P(FullGraphTest, GradientsMatchFiniteDifferences) {
  for (const size_t layers : {2, 3}) {
    SCOPED_TRACE(layers);
    TrainOptions o = Options(uint64_t{64} << 20);
    o.model.layers = layers;
    o.model.activation = layers == 3 ? Activation::kElu : Activation::kRelu;
    o.model.input_dropout = 0;
    o.model.dropout = 0;
    o.model.bias = true;
    o.optimizer.weight_decay = 0;
    o.optimizer.lr = 1e-30;
    ExpectGradientsMatchFiniteDifferences(o, layers);
  }
}

void FullGraphTest::ExpectGradientsMatchFiniteDifferences(const TrainOptions& o, size_t layers) {
  FullGraphRunner runner(o, Dataset::Open(Path()));
  // Biases away from zero: where attention dropout drops all of a node's edges in a head (on
  // the directed graph, whose first nodes have few in-edges), the output is the bias alone,
  // and at zero it would sit on the ReLU's kink, where a central difference sees half a slope.
  for (Parameter& p : runner.Parameters()) {
    if (p.name.ends_with("bias")) std::fill_n(p.value.data(), p.value.cols(), 0.05f);
  }
  runner.TrainEpoch(1);  // the epoch the differences repeat: GAT's attention dropout masks too
  std::vector<Parameter> params = runner.Parameters();
  // A weight (SAGE: W_self and W_neigh; GAT: the weight, attn_l and attn_r) and a bias per
  // layer.
  ASSERT_EQ(params.size(), (Sage() ? 3 : Gat() ? 4 : 2) * layers);
  for (Parameter& p : params) {
    SCOPED_TRACE(p.name);
    for (size_t k = 0; k < 3; ++k) {
      const size_t i = (k * 7) % p.value.rows(), j = (k * 5) % p.value.cols();
      const float analytic = p.grad(i, j);
      const float saved = p.value(i, j);
      const float h = 3e-3f;
      p.value(i, j) = saved + h;
      const double up = runner.TrainEpoch(1).train_loss;
      p.value(i, j) = saved - h;
      const double down = runner.TrainEpoch(1).train_loss;
      p.value(i, j) = saved;
      EXPECT_NEAR((up - down) / (2 * h), analytic, 2e-3 + 0.02 * std::abs(analytic))
          << "(" << i << ", " << j << ")";
    }
  }
}

// A full-graph checkpoint is an ordinary GCN checkpoint: `strata eval` with full
// neighbourhoods measures the same model — on dense features; the mini-batch path refuses
// sparse ones in one line.
TEST_P(FullGraphTest, MiniBatchEvaluationReadsTheCheckpoint) {
  ScratchDir checkpoint;
  TrainOptions o = Options(uint64_t{64} << 20);
  o.epochs = 5;
  o.checkpoint_dir = checkpoint.path();
  const TrainResult trained = Train(o);
  TrainOptions eval = o;
  eval.full_graph = false;
  eval.sampling.eval_fanouts = {};
  eval.features.store = FeatureStoreKind::kMemory;
  if (SparseFeatures()) {
    try {
      EvaluateCheckpoint(eval);
      FAIL() << "mini-batch evaluation read sparse features";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      EXPECT_NE(std::string(e.what()).find("has sparse (CSR) features"), std::string::npos)
          << e.what();
    }
    return;
  }
  const EvalResult evaluated = EvaluateCheckpoint(eval);
  EXPECT_EQ(evaluated.epoch, 5u);
  // Same model; the two paths sum in different orders, so allow a node whose logits tie.
  const double one_node = 1.0 / Dataset::Open(o.dataset).meta().split_size(Split::kVal);
  EXPECT_NEAR(evaluated.val_acc, trained.final_val_acc, one_node + 1e-12);
}

// Train 4 epochs with the graph streamed, or 2 and resume to 4: the same losses and the same
// final checkpoint.
TEST_P(FullGraphTest, ResumeContinuesTheRun) {
  ScratchDir dir;
  TrainOptions o = Options(Gat() ? uint64_t{3} << 20 : uint64_t{2} << 20);
  o.epochs = 4;
  o.checkpoint_dir = dir / "straight";
  const TrainResult straight = Train(o);
  o.checkpoint_dir = dir / "resumed";
  o.epochs = 2;
  Train(o);
  o.epochs = 4;
  o.resume = true;
  const TrainResult resumed = Train(o);
  ASSERT_EQ(resumed.epochs.size(), 2u);
  for (size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(resumed.epochs[e].train_loss, straight.epochs[e + 2].train_loss);
  }
  EXPECT_EQ(resumed.test_acc, straight.test_acc);
  EXPECT_EQ(ReadWholeFile(dir / "resumed/checkpoint.bin"),
            ReadWholeFile(dir / "straight/checkpoint.bin"));
}

TEST_P(FullGraphTest, TruncatedFilesAreOneClearError) {
  ScratchDir copy;
  std::filesystem::copy(Path(), copy / "g", std::filesystem::copy_options::recursive);
  // Sparse: the ids, which stream whether or not the values (all 1 in "sparse") do.
  const bool sparse = SparseFeatures();
  const std::string truncated = sparse ? "features/indices.bin" : "features.bin";
  std::filesystem::resize_file(copy / ("g/" + truncated), 20 * 4096);
  for (uint64_t budget : {uint64_t{64} << 20, uint64_t{2} << 20}) {
    TrainOptions o = Options(budget);
    o.dataset = copy / "g";
    try {
      FullGraphRunner runner(o, Dataset::Open(o.dataset));
      runner.TrainEpoch(0);
      FAIL() << "a truncated features.bin trained";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput) << e.what();
      EXPECT_NE(std::string(e.what()).find(truncated), std::string::npos) << e.what();
    }
  }
}

// Offsets that point past the adjacency (a row's end raised beyond the edges, so that its
// offsets decrease after it) are one input error naming the indptr, before any read follows
// them.
TEST_P(FullGraphTest, BadOffsetsAreOneClearError) {
  ScratchDir copy;
  std::filesystem::copy(Path(), copy / "g", std::filesystem::copy_options::recursive);
  const std::string indptr = copy / "g/graph/indptr.bin";
  {
    std::fstream file(indptr, std::ios::in | std::ios::out | std::ios::binary);
    const uint64_t past = uint64_t{1} << 62;
    file.seekp(8 * 10);
    file.write(reinterpret_cast<const char*>(&past), sizeof(past));
  }
  TrainOptions o = Options(uint64_t{64} << 20);
  o.dataset = copy / "g";
  try {
    FullGraphRunner runner(o, Dataset::Open(o.dataset));
    FAIL() << "offsets past the edges were planned";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput) << e.what();
    EXPECT_NE(std::string(e.what()).find("graph/indptr.bin"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("offsets"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Features, FullGraphTest,
                         ::testing::Values("dense", "sparse", "weighted", "directed", "dense_sage",
                                           "sparse_sage", "directed_sage", "dense_gat",
                                           "sparse_gat", "directed_gat"),
                         [](const auto& info) { return std::string(info.param); });

// Values all 1 are held as ones in the scratch rather than read: row-normalised, they train
// what a copy whose values are all 2 trains from its values file (each row's sums scale by 2
// and its norm's inverse by 1/2, both exact), digit for digit, in memory and streamed.
TEST(FullGraphBinaryFeatures, OnesInTheScratchTrainAsStoredValues) {
  ScratchDir dir;
  GenerateOptions g = testing::SmallGraph(dir / "ones", 3000, 400, 4, 12, 8);
  g.feature_density = 0.1;  // 480 KB of ids: streamed within 2 MiB
  GenerateDataset(g);
  std::filesystem::copy(dir / "ones", dir / "twos", std::filesystem::copy_options::recursive);
  {
    const std::string path = dir / "twos/features/values.bin";
    std::vector<float> twos(std::filesystem::file_size(path) / sizeof(float), 2.0f);
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(reinterpret_cast<const char*>(twos.data()),
               static_cast<std::streamsize>(twos.size() * sizeof(float)));
  }
  auto options = [&](const std::string& name, uint64_t budget) {
    TrainOptions o;
    o.dataset = dir / name;
    o.full_graph = true;
    o.model.hidden = 16;
    o.model.input_dropout = 0.5;
    o.features.row_normalize = true;
    o.memory_budget_bytes = budget;
    o.full_graph_chunk_rows = 1024;
    o.scratch_dir = dir.path();
    return o;
  };
  FullGraphRunner ones(options("ones", uint64_t{64} << 20), Dataset::Open(dir / "ones"));
  EXPECT_TRUE(ones.plan().unit_values);
  std::vector<double> expected;
  for (int e = 0; e < 3; ++e) expected.push_back(ones.TrainEpoch(e).train_loss);
  const uint64_t streamed = uint64_t{9} << 18;  // 2.25 MiB, just above the smallest budget
  for (const std::string name : {"ones", "twos"}) {
    for (uint64_t budget : {uint64_t{64} << 20, streamed}) {
      SCOPED_TRACE(name + " " + std::to_string(budget));
      FullGraphRunner runner(options(name, budget), Dataset::Open(dir / name));
      EXPECT_EQ(runner.plan().unit_values, name == "ones");
      EXPECT_EQ(runner.plan().features_resident, budget != streamed);
      for (int e = 0; e < 3; ++e) EXPECT_EQ(runner.TrainEpoch(e).train_loss, expected[e]) << e;
    }
  }
}

// The full graph's logits are the mini-batch path's over full neighbourhoods, on Cora with
// row-normalised features, after a few epochs of full-graph training, for GCN, SAGE and GAT (4
// heads of 8 with ELU, the logits' 2 heads averaged).
TEST(FullGraphCora, LogitsAreTheMiniBatchPathsOverFullNeighbourhoods) {
  const std::string cora = testing::RepositoryDataset("cora");
  for (ModelKind kind : {ModelKind::kGcn, ModelKind::kSage, ModelKind::kGat}) {
    SCOPED_TRACE(ModelKindName(kind));
    TrainOptions o;
    o.dataset = cora;
    o.full_graph = true;
    o.model.kind = kind;
    o.model.hidden = kind == ModelKind::kGat ? 8 : 16;
    o.model.heads = 4;
    o.model.out_heads = 2;
    o.model.activation = kind == ModelKind::kGat ? Activation::kElu : Activation::kRelu;
    o.model.attention_dropout = 0.6;
    o.features.row_normalize = true;
    o.memory_budget_bytes = uint64_t{256} << 20;
    FullGraphRunner full(o, Dataset::Open(cora));
    for (int e = 0; e < 3; ++e) full.TrainEpoch(e);
    const uint64_t nodes = Dataset::Open(cora).meta().num_nodes;
    const size_t classes = Dataset::Open(cora).meta().num_classes;
    std::vector<float> expected(nodes * classes);
    full.ForEachLogitsChunk([&](MatrixSpan<const float> rows, uint64_t first) {
      for (size_t r = 0; r < rows.rows(); ++r) {
        std::copy_n(rows.row(r), classes, expected.data() + (first + r) * classes);
      }
    });

    TrainOptions mb = o;
    mb.full_graph = false;
    mb.sampling.fanouts = {-1, -1};
    mb.features.store = FeatureStoreKind::kMemory;
    Session session(mb, Dataset::Open(cora));
    std::vector<Parameter> into = session.model().model().Parameters();
    std::vector<Parameter> from = full.Parameters();
    ASSERT_EQ(into.size(), from.size());
    for (size_t p = 0; p < into.size(); ++p) {
      ASSERT_EQ(into[p].name, from[p].name);
      for (size_t r = 0; r < into[p].value.rows(); ++r) {
        std::copy_n(from[p].value.row(r), into[p].value.cols(), into[p].value.row(r));
      }
    }
    std::vector<uint64_t> seeds(nodes);
    std::iota(seeds.begin(), seeds.end(), 0);
    double largest = 0;
    for (uint64_t first = 0; first < nodes; first += 500) {
      const std::span<const uint64_t> batch_seeds =
          std::span<const uint64_t>(seeds).subspan(first, std::min<uint64_t>(500, nodes - first));
      SampledBatch batch = session.eval_sampler().SampleFullNeighborhood(batch_seeds);
      std::vector<float> features(batch.input_nodes().size() *
                                  session.dataset().meta().feature_dim);
      session.store().Gather(batch.input_nodes(), features);
      MatrixSpan<const float> logits = session.model().Predict(batch, features);
      for (size_t i = 0; i < batch_seeds.size(); ++i) {
        for (size_t c = 0; c < classes; ++c) {
          largest = std::max<double>(
              largest, std::abs(logits(i, c) - expected[batch_seeds[i] * classes + c]));
        }
      }
    }
    std::cout << "largest logit difference " << largest << "\n";
    EXPECT_LT(largest, 1e-4);
  }
}

// On 20,000 nodes the propagation input (N × 40) outweighs the slices' chunk buffers: below the
// unsliced floor the plan slices it (16 columns, 8, ... 1), down to a smaller
// smallest budget, with the same losses; row-normalised.
TEST(FullGraphSlices, SlicesLowerTheSmallestBudget) {
  ScratchDir dir;
  GenerateOptions graph = testing::SmallGraph(dir / "graph", 20000, 400, 4, 8, 3);
  graph.feature_density = 0.02;
  GenerateDataset(graph);
  for (ModelKind kind : {ModelKind::kGcn, ModelKind::kSage}) {
    auto options = [&](uint64_t budget) {
      TrainOptions o;
      o.dataset = dir / "graph";
      o.full_graph = true;
      o.model.kind = kind;
      o.model.hidden = 40;
      o.model.input_dropout = 0.5;
      o.model.dropout = 0.2;
      o.features.row_normalize = true;
      o.memory_budget_bytes = budget;
      o.seed = 9;
      o.full_graph_chunk_rows = 1024;
      o.scratch_dir = dir.path();
      return o;
    };
    const BudgetSweep sweep = SweepBudgets(options, dir / "graph", 512 << 10, 8 << 20);
    EXPECT_TRUE(sweep.slices.contains(1));
    EXPECT_GT(*sweep.slices.rbegin(), 2u);
    TrainOptions whole = options(sweep.smallest);
    whole.full_graph_slices = 1;
    EXPECT_THROW(FullGraphRunner(whole, Dataset::Open(dir / "graph")), Error);
  }
}

// The acceptance run: Cora, Kipf's recipe, with a quarter of the memory the resident run
// peaked at; the features then stream and the losses are those of the resident run.
TEST(FullGraphCora, AQuarterOfTheMemoryGivesTheSameLosses) {
  const std::string cora = testing::RepositoryDataset("cora");
  TrainOptions o;
  o.dataset = cora;
  o.full_graph = true;
  o.model.kind = ModelKind::kGcn;
  o.model.hidden = 16;
  o.model.input_dropout = 0.5;
  o.model.bias = false;
  o.features.row_normalize = true;
  o.optimizer.weight_decay = 5e-4;
  o.optimizer.weight_decay_scope = WeightDecayScope::kFirstLayer;
  o.memory_budget_bytes = uint64_t{256} << 20;
  FullGraphRunner resident(o, Dataset::Open(cora));
  std::vector<double> expected;
  for (int e = 0; e < 5; ++e) expected.push_back(resident.TrainEpoch(e).train_loss);
  o.memory_budget_bytes = resident.budget().peak() / 4;
  FullGraphRunner streamed(o, Dataset::Open(cora));
  EXPECT_FALSE(streamed.plan().features_resident);
  for (int e = 0; e < 5; ++e) EXPECT_EQ(streamed.TrainEpoch(e).train_loss, expected[e]) << e;
  EXPECT_LE(streamed.budget().peak(), o.memory_budget_bytes);
}

}  // namespace
}  // namespace strata
