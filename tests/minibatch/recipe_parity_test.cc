// Strata against the PyTorch reference (tools/reference/): the published full-batch recipes of
// GCN, GraphSAGE and GAT on Cora (row-normalised and raw), on a generated dense-binary
// dataset, on a proxy of a co-purchase graph with wide, dense, raw binary features, and GCN on
// the real one (Amazon Computers). Strata's mean training-loss curve must follow the
// reference's, and its mean final test accuracy must be within a point of the reference's, over
// the same seeds (not the same numbers: the RNGs differ); from the same draws, the same numbers.
// The reference's curves are checked-in fixtures (tests/fixtures/recipes, recorded by
// tools/reference/record_fixtures.py), so this test needs no PyTorch.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "repository_dataset.h"
#include "strata/train.h"
#include "test_util.h"

namespace strata {
namespace {

#ifdef STRATA_SANITIZED
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

nlohmann::json ReadFixture(const std::string& name) {
  std::ifstream in(std::string(STRATA_TEST_FIXTURES) + "/recipes/" + name + ".json");
  EXPECT_TRUE(in.good()) << "fixture " << name << " not found";
  return nlohmann::json::parse(in);
}

// The generated dataset of a fixture, built once per run by the strata binary from the
// fixture's own `dataset_command` ("strata generate OUT ARGS..."), so that this test and
// record_fixtures.py cannot build different data.
std::string GeneratedDataset(const std::string& fixture_name) {
  static const testing::ScratchDir dir;  // removed at exit
  const nlohmann::json fixture = ReadFixture(fixture_name);
  std::istringstream command(fixture.at("dataset_command").get<std::string>());
  std::vector<std::string> words{std::istream_iterator<std::string>(command), {}};
  const std::string out = dir / fixture.at("dataset").get<std::string>();
  if (!std::filesystem::exists(out)) {
    EXPECT_EQ(words.at(1), "generate");
    EXPECT_EQ(words.at(2), "OUT");
    std::vector<std::string> args = {"generate", out};
    args.insert(args.end(), words.begin() + 3, words.end());
    const testing::CommandResult built = testing::RunStrata(args);
    EXPECT_EQ(built.exit_status, 0) << built.err;
  }
  return out;
}

// The recipe train_reference.py trains, as Strata options: full batch (every training node,
// full neighbourhoods), final-epoch model.
TrainOptions Recipe(const std::string& dataset, const nlohmann::json& recipe) {
  TrainOptions o;
  o.dataset = dataset;
  o.model.kind = ParseModelKind(recipe.at("model").get<std::string>());
  o.model.layers = 2;
  o.model.hidden = recipe.at("hidden").get<size_t>();
  o.model.dropout = recipe.at("dropout").get<double>();
  o.model.input_dropout = recipe.at("input_dropout").get<double>();
  o.model.bias = recipe.at("bias").get<bool>();
  o.model.activation = ParseActivation(recipe.at("activation").get<std::string>());
  if (o.model.kind == ModelKind::kGat) {
    o.model.heads = recipe.at("heads").get<size_t>();
    o.model.out_heads = recipe.at("out_heads").get<size_t>();
    o.model.attention_dropout = recipe.at("attention_dropout").get<double>();
  }
  o.optimizer.lr = recipe.at("lr").get<double>();
  o.optimizer.weight_decay = recipe.at("weight_decay").get<double>();
  const std::string decay_on = recipe.at("weight_decay_on").get<std::string>();
  o.optimizer.weight_decay_scope =
      decay_on == "first layer weight" ? WeightDecayScope::kFirstLayer : WeightDecayScope::kAll;
  o.features.row_normalize = recipe.at("row_normalize").get<bool>();
  o.epochs = recipe.at("epochs").get<uint64_t>();
  o.sampling.fanouts = {-1, -1};
  o.sampling.batch_size = uint64_t{1} << 30;  // one batch: the whole training set
  o.features.store = FeatureStoreKind::kMemory;
  o.memory_budget_bytes = uint64_t{2} << 30;
  o.eval_every = 0;
  o.threads = 2;
  return o;
}

std::vector<double> Smoothed(const std::vector<double>& curve, size_t window) {
  std::vector<double> out;
  for (size_t i = 0; i < curve.size(); i += window) {
    const size_t end = std::min(curve.size(), i + window);
    out.push_back(std::accumulate(curve.begin() + i, curve.begin() + end, 0.0) / (end - i));
  }
  return out;
}

double Mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / v.size();
}

// Runs the fixture's recipe for its seeds and compares. Loss curves are compared as means over
// the seeds, smoothed over 10 epochs (dropout makes single epochs noisy): each window within 10%
// of the reference's, plus 0.03 (late windows of a converged run are near 0), plus 1.5 times
// the spread of the reference's seeds in that window (wide only where the recipe is unstable,
// as the difference of two 5-seed means has about 0.63 times one seed's spread). Mean final test
// accuracy: within a point of the reference's, unless the recipe itself is unstable on the
// dataset (its seeds' standard deviation above 5 points: GraphSAGE on raw dense-binary features,
// where some seeds collapse in PyTorch too); then within the range the reference's seeds span.
// With `full_graph`, Strata trains the recipe with --full-graph instead of one full batch.
// `max_seeds` trains only the fixture's first seeds, against the statistics of all of them.
void ExpectParity(const std::string& fixture_name, const std::string& dataset,
                  bool full_graph = false, size_t max_seeds = SIZE_MAX) {
  SCOPED_TRACE(fixture_name);
  const nlohmann::json fixture = ReadFixture(fixture_name);
  nlohmann::json recipe = fixture.at("recipe");
  recipe["model"] = fixture.at("model");
  TrainOptions o = Recipe(dataset, recipe);
  o.full_graph = full_graph;
  const std::vector<double> reference_acc = fixture.at("final_test_acc");
  const std::vector<double> reference_loss = fixture.at("train_loss_mean");
  const std::vector<double> reference_loss_std = fixture.at("train_loss_std");
  ASSERT_EQ(reference_loss.size(), o.epochs);
  if (kSanitized) {  // every code path, none of the numerics
    o.epochs = 3;
    Train(o);
    return;
  }
  std::vector<double> accuracy, loss(o.epochs, 0.0);
  const size_t seeds = std::min(max_seeds, reference_acc.size());
  for (size_t seed = 0; seed < seeds; ++seed) {
    o.seed = seed;
    TrainResult result = Train(o);
    accuracy.push_back(result.final_test_acc);
    for (size_t e = 0; e < o.epochs; ++e) loss[e] += result.epochs[e].train_loss;
  }
  for (double& l : loss) l /= seeds;
  const std::vector<double> ours = Smoothed(loss, 10), theirs = Smoothed(reference_loss, 10);
  const std::vector<double> spread = Smoothed(reference_loss_std, 10);
  for (size_t w = 0; w < ours.size(); ++w) {
    EXPECT_NEAR(ours[w], theirs[w], 0.1 * theirs[w] + 0.03 + 1.5 * spread[w])
        << "epochs " << 10 * w << "+";
  }
  ::testing::Test::RecordProperty("mean_test_accuracy", std::to_string(Mean(accuracy)));
  ::testing::Test::RecordProperty("reference_mean_test_accuracy",
                                  std::to_string(Mean(reference_acc)));
  const auto [low, high] = std::minmax_element(reference_acc.begin(), reference_acc.end());
  double variance = 0;
  for (double a : reference_acc) variance += (a - Mean(reference_acc)) * (a - Mean(reference_acc));
  if (std::sqrt(variance / (reference_acc.size() - 1)) <= 0.05) {
    EXPECT_NEAR(Mean(accuracy), Mean(reference_acc), 0.01);
  } else {
    // The fixture holds 5 significant digits: a seed at the same collapsed accuracy (every
    // node given one class) may read just below the rounded minimum.
    EXPECT_GE(Mean(accuracy), *low - 1e-5);
    EXPECT_LE(Mean(accuracy), *high + 1e-5);
  }
}

class RecipeParity : public ::testing::TestWithParam<const char*> {};

TEST_P(RecipeParity, CoraRowNormalised) {
  const std::string cora = testing::RepositoryDataset("cora");
  ExpectParity(std::string("cora-") + GetParam(), cora);
}

TEST_P(RecipeParity, CoraRaw) {
  const std::string cora = testing::RepositoryDataset("cora");
  ExpectParity(std::string("cora-raw-") + GetParam(), cora);
}

TEST_P(RecipeParity, DenseBinary) {
  const std::string fixture = std::string("binary-") + GetParam();
  ExpectParity(fixture, GeneratedDataset(fixture));
}

// The full-graph path (fullgraph/) trains Kipf's GCN recipe exactly as the reference does: the
// whole graph per epoch.
TEST(FullGraphRecipeParity, GcnCoraRowNormalised) {
  const std::string cora = testing::RepositoryDataset("cora");
  ExpectParity("cora-gcn", cora, true);
}

TEST(FullGraphRecipeParity, GcnDenseBinary) {
  ExpectParity("binary-gcn", GeneratedDataset("binary-gcn"), true);
}

// Kipf's GCN recipe is bistable on wide, dense, raw inputs, in PyTorch as in Strata: some seeds
// train, others lose most hidden units in the first steps (tools/reference/README.md), and
// GraphSAGE's collapses on them. So one Strata seed (a minute for GAT) is checked against the
// spread of the reference's ten: within a point of GAT's stable 99.9%, within the range of the
// others; the ten-seed comparison is tools/reference/compare_strata.py's.
TEST_P(RecipeParity, CopurchaseProxy) {
  const std::string fixture = std::string("copurchase-") + GetParam();
  ExpectParity(fixture, GeneratedDataset(fixture), false, 1);
}

// Amazon Computers (datasets/README.md), the real co-purchase graph. Kipf's GCN recipe is
// multimodal there, in PyTorch as in Strata: a seed keeps anywhere from none to 9 of its 16
// hidden units alive (tools/reference/README.md), so a few seeds' mean says little. The
// full-graph path is checked step by step instead: from Strata's initial weights and dropout
// masks of one seed, which the reference drew with tools/reference/strata_streams.py, both must
// give the same training loss at every epoch, up to float32 rounding, and the same final test
// accuracy (two of the 2,751 test nodes may change class on that rounding). The mini-batch
// path, whose masks differ, trains one seed against the spread of the reference's forty.
TEST(AmazonComputersParity, GcnFullGraphStepByStep) {
  const nlohmann::json fixture = ReadFixture("locked/amazon-computers-gcn-seed4");
  nlohmann::json recipe = fixture.at("recipe");
  recipe["model"] = fixture.at("model");
  TrainOptions o = Recipe(testing::RepositoryDataset("amazon-computers"), recipe);
  o.full_graph = true;
  o.seed = fixture.at("seed").get<uint64_t>();
  const std::vector<double> reference_loss = fixture.at("train_loss");
  ASSERT_EQ(reference_loss.size(), o.epochs);
  if (kSanitized) o.epochs = 3;  // the numbers of three steps, in a tenth of the time
  const TrainResult result = Train(o);
  ASSERT_EQ(result.epochs.size(), o.epochs);
  for (size_t e = 0; e < o.epochs; ++e) {
    EXPECT_NEAR(result.epochs[e].train_loss, reference_loss[e], 1e-4 * reference_loss[e])
        << "epoch " << e;
  }
  if (!kSanitized) {
    EXPECT_NEAR(result.final_test_acc, fixture.at("final_test_acc").get<double>(), 2.5 / 2751);
  }
}

TEST(AmazonComputersParity, GcnMiniBatch) {
  ExpectParity("amazon-computers-gcn", testing::RepositoryDataset("amazon-computers"), false, 1);
}

INSTANTIATE_TEST_SUITE_P(Models, RecipeParity, ::testing::Values("gcn", "sage", "gat"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace strata
