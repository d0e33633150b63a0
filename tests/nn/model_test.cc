#include "nn/model.h"

#include <gtest/gtest.h>

#include <string>

#include "nn/adam.h"
#include "nn/layer_spec.h"
#include "nn/loss.h"
#include "nn_test_util.h"
#include "strata/error.h"

namespace strata {
namespace {

using testing::BitIdentical;
using testing::RandomBlocks;
using testing::RandomMatrix;

std::vector<int32_t> RandomLabels(size_t n, int32_t classes, uint64_t seed) {
  Rng rng(seed);
  std::vector<int32_t> labels(n);
  for (auto& l : labels) l = static_cast<int32_t>(rng.Below(classes + 1)) - 1;  // some -1
  return labels;
}

template <typename T>
std::vector<T> RandomNorms(size_t n) {
  std::vector<T> norm(n);
  Rng rng(77);
  for (T& v : norm) v = static_cast<T>(1 / std::sqrt(1.0 + rng.Below(9)));
  return norm;
}

ModelConfig SmallConfig(ModelKind kind) {
  ModelConfig config;
  config.kind = kind;
  config.in_dim = 4;
  config.hidden = 3;
  config.num_classes = 3;
  config.layers = 2;
  config.dropout = 0.5;
  config.input_dropout = 0.2;
  config.heads = 2;
  config.out_heads = 2;
  config.attention_dropout = kind == ModelKind::kGat ? 0.25 : 0.0;
  config.seed = 5;
  return config;
}

// The whole model, cross-entropy included, against finite differences in double, with every
// dropout on (fixed step seed, so the masks are the same in every evaluation). With `history`,
// two of the hidden layer's input rows are stale (constants: no gradient flows through them)
// and two fresh.
void CheckModelGradients(ModelConfig config, bool history = false) {
  SCOPED_TRACE(std::string(ModelKindName(config.kind)) + " " +
               std::string(ActivationName(config.activation)) + (config.bias ? "" : " no bias"));
  BasicModel<double> model(config);
  std::vector<Block> blocks = RandomBlocks({16, 8, 5}, 4, 1);
  MatrixD features = RandomMatrix<double>(16, 4, 2);
  std::vector<double> norm = RandomNorms<double>(16);
  std::vector<int32_t> labels = {0, 2, -1, 1, 2};
  MatrixD grad(5, 3);
  std::vector<HiddenHistory<double>> exchange;
  if (history) {
    HiddenHistory<double>& h = exchange.emplace_back();
    h.stale = {1, 6};
    const size_t width = model.layer(1).in_dim();
    MatrixD stale = RandomMatrix<double>(2, width, 3);
    h.stale_rows.assign(stale.data(), stale.data() + 2 * width);
    h.fresh = {0, 2};
  }
  auto loss = [&] {
    MatrixSpan<const double> logits =
        model.Forward(blocks, features.span(), norm, true, 9, exchange);
    return SoftmaxCrossEntropy<double>(logits, labels, grad.span()).loss;
  };
  loss();
  model.Backward(grad.span());
  std::vector<MatrixD> analytic;
  for (auto& p : model.Parameters()) {
    analytic.emplace_back();
    analytic.back().CopyFrom(p.grad);
  }
  size_t i = 0;
  for (auto& p : model.Parameters()) {
    testing::ExpectGradientMatches(p.name, analytic[i++].span(), p.value, loss);
  }
}

TEST(Model, SageBackwardMatchesFiniteDifferences) {
  CheckModelGradients(SmallConfig(ModelKind::kSage));
}
TEST(Model, GcnBackwardMatchesFiniteDifferences) {
  CheckModelGradients(SmallConfig(ModelKind::kGcn));
}
TEST(Model, GatBackwardMatchesFiniteDifferences) {
  CheckModelGradients(SmallConfig(ModelKind::kGat));
}
TEST(Model, MlpBackwardMatchesFiniteDifferences) {
  CheckModelGradients(SmallConfig(ModelKind::kMlp));
}

TEST(Model, StaleHistoryRowsCarryNoGradient) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    CheckModelGradients(SmallConfig(kind), /*history=*/true);
  }
}

// A fresh row is the hidden layer's input as evaluation computes it: fed back as stale rows,
// every row of them, the logits do not change.
TEST(Model, FreshHistoryRowsAreTheHiddenLayersInputs) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    BasicModel<double> model(SmallConfig(kind));
    std::vector<Block> blocks = RandomBlocks({16, 8, 5}, 4, 1);
    MatrixD features = RandomMatrix<double>(16, 4, 2);
    std::vector<double> norm = RandomNorms<double>(16);
    std::vector<HiddenHistory<double>> exchange(1);
    for (uint32_t r = 0; r < 8; ++r) exchange[0].fresh.push_back(r);
    MatrixD logits;
    logits.CopyFrom(model.Forward(blocks, features.span(), norm, false, 0, exchange));
    std::vector<HiddenHistory<double>> replay(1);
    replay[0].stale = exchange[0].fresh;
    replay[0].stale_rows = exchange[0].fresh_rows;
    MatrixD other = RandomMatrix<double>(16, 4, 3);  // the input no longer matters
    MatrixSpan<const double> again = model.Forward(blocks, other.span(), norm, false, 0, replay);
    for (size_t i = 0; i < logits.rows(); ++i) {
      for (size_t j = 0; j < logits.cols(); ++j) {
        EXPECT_NEAR(again(i, j), logits(i, j), 1e-12) << ModelKindName(kind);
      }
    }
  }
}

// The reference recipes' variants: ELU between layers (GAT), no biases (Kipf's GCN).
TEST(Model, EluAndBiasFreeBackwardMatchesFiniteDifferences) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    ModelConfig config = SmallConfig(kind);
    config.activation = Activation::kElu;
    CheckModelGradients(config);
    config.activation = Activation::kRelu;
    config.bias = false;
    CheckModelGradients(config);
  }
}

struct StepResult {
  Matrix logits;
  std::vector<Matrix> params;
  double loss = 0;
};

// Three training steps (forward, loss, backward, Adam) on a batch large enough that every
// kernel splits its work over threads.
StepResult Train(ModelKind kind, unsigned threads, uint64_t seed) {
  ModelConfig config;
  config.kind = kind;
  config.in_dim = 32;
  config.hidden = kind == ModelKind::kGat ? 8 : 48;
  config.num_classes = 7;
  config.layers = 3;
  config.dropout = 0.3;
  config.input_dropout = 0.1;
  config.heads = 4;
  config.out_heads = 2;
  config.attention_dropout = kind == ModelKind::kGat ? 0.2 : 0.0;
  config.seed = seed;
  config.threads = threads;
  Model model(config);
  Adam adam(model.Parameters(), {.lr = 0.01, .weight_decay = 5e-4});
  std::vector<Block> blocks = RandomBlocks({9000, 3000, 900, 300}, 10, 3);
  Matrix features = RandomMatrix<float>(9000, 32, 4);
  std::vector<float> norm = RandomNorms<float>(9000);
  std::vector<int32_t> labels = RandomLabels(300, 7, 5);
  StepResult result;
  Matrix grad(300, 7);
  for (uint64_t step = 0; step < 3; ++step) {
    MatrixSpan<const float> logits = model.Forward(blocks, features.span(), norm, true, step);
    result.loss = SoftmaxCrossEntropy<float>(logits, labels, grad.span()).loss;
    model.Backward(grad.span());
    adam.Step();
    result.logits.CopyFrom(logits);
  }
  for (auto& p : model.Parameters()) {
    result.params.emplace_back();
    result.params.back().CopyFrom(p.value);
  }
  return result;
}

void ExpectSame(const StepResult& a, const StepResult& b) {
  EXPECT_TRUE(BitIdentical<float>(a.logits.span(), b.logits.span()));
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    EXPECT_TRUE(BitIdentical<float>(a.params[i].span(), b.params[i].span())) << "parameter " << i;
  }
  EXPECT_EQ(a.loss, b.loss);
}

TEST(Model, SameSeedSameResultsForOneOrTwoThreads) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    SCOPED_TRACE(std::string(ModelKindName(kind)));
    StepResult one = Train(kind, 1, 11);
    StepResult two = Train(kind, 2, 11);
    ExpectSame(one, two);
    StepResult again = Train(kind, 2, 11);
    ExpectSame(two, again);
    StepResult other = Train(kind, 2, 12);
    EXPECT_FALSE(BitIdentical<float>(one.params[0].span(), other.params[0].span()));
  }
}

TEST(Model, LearnsASmallProblem) {
  // Labels are a function of the features; a few dozen Adam steps must fit them.
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat, ModelKind::kMlp}) {
    SCOPED_TRACE(std::string(ModelKindName(kind)));
    ModelConfig config = SmallConfig(kind);
    config.in_dim = 8;
    config.hidden = 16;
    config.dropout = 0;
    config.input_dropout = 0;
    config.attention_dropout = 0;
    Model model(config);
    Adam adam(model.Parameters(), {.lr = 0.02});
    std::vector<Block> blocks = RandomBlocks({200, 100, 60}, 5, 6);
    Matrix features = RandomMatrix<float>(200, 8, 7);
    std::vector<float> norm = RandomNorms<float>(200);
    std::vector<int32_t> labels(60);
    for (size_t i = 0; i < 60; ++i)
      labels[i] = features(i, 0) > 0.3f ? 2 : features(i, 1) > 0 ? 1 : 0;
    Matrix grad(60, 3);
    double first = 0, last = 0;
    for (int step = 0; step < 150; ++step) {
      MatrixSpan<const float> logits = model.Forward(blocks, features.span(), norm, true, step);
      last = SoftmaxCrossEntropy<float>(logits, labels, grad.span()).loss;
      if (step == 0) first = last;
      model.Backward(grad.span());
      adam.Step();
    }
    EXPECT_LT(last, 0.5 * first);
    MatrixSpan<const float> logits = model.Forward(blocks, features.span(), norm, false, 0);
    EXPECT_GT(CountCorrect(logits, labels).accuracy(), 0.8);
  }
}

TEST(Model, RejectsBadConfigsAndMismatchedBatches) {
  ModelConfig config = SmallConfig(ModelKind::kSage);
  config.dropout = 1.0;
  EXPECT_THROW(Model{config}, Error);
  EXPECT_THROW(ParseModelKind("linear"), Error);
  EXPECT_EQ(ParseModelKind("mlp"), ModelKind::kMlp);
  EXPECT_EQ(ParseModelKind("gat"), ModelKind::kGat);
  Model model(SmallConfig(ModelKind::kSage));
  std::vector<Block> blocks = RandomBlocks({16, 8, 5}, 4, 1);
  Matrix wrong_rows(15, 4);
  EXPECT_THROW(model.Forward(blocks, wrong_rows.span(), {}, false, 0), Error);
  std::vector<Block> one_block = {blocks[0]};
  Matrix features(16, 4);
  EXPECT_THROW(model.Forward(one_block, features.span(), {}, false, 0), Error);
  Model gcn(SmallConfig(ModelKind::kGcn));
  EXPECT_THROW(gcn.Forward(blocks, features.span(), {}, false, 0), Error);
}

// One statement of the model's rules for every path, each refusal one line naming the option.
TEST(Model, LayerSpecsGiveTheBuiltLayersWidths) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    SCOPED_TRACE(std::string(ModelKindName(kind)));
    ModelConfig config = SmallConfig(kind);
    config.layers = 3;
    config.heads = 4;
    config.out_heads = 2;
    BasicModel<float> model(config);
    const std::vector<LayerSpec> specs = LayerSpecsOf(config);
    ASSERT_EQ(specs.size(), config.layers);
    for (size_t l = 0; l < specs.size(); ++l) {
      const BasicLayer<float>& layer = model.layer(l);
      EXPECT_EQ(specs[l].in, layer.in_dim());
      EXPECT_EQ(specs[l].out_dim(), layer.out_dim());
      EXPECT_EQ(specs[l].gathered_width(), layer.gathered_width());
      EXPECT_EQ(specs[l].self_width(), layer.self_width());
      EXPECT_EQ(specs[l].aggregates_inputs(), layer.aggregates_inputs());
    }
  }
}

TEST(ModelOptions, RefusalsNameTheOption) {
  auto refusal = [](const ModelOptions& options) {
    try {
      CheckModelOptions(options);
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(refusal(ModelOptions{}), "accepted");
  ModelOptions o;
  o.dropout = 1;
  EXPECT_EQ(refusal(o), "--dropout must be in [0, 1), not 1");
  o = {};
  o.input_dropout = -0.5;
  EXPECT_EQ(refusal(o), "--input-dropout must be in [0, 1), not -0.5");
  o = {};
  o.attention_dropout = 1.5;
  EXPECT_EQ(refusal(o), "--attention-dropout must be in [0, 1), not 1.5");
  o = {};
  o.layers = 0;
  EXPECT_EQ(refusal(o), "--layers must be positive");
  o = {};
  o.hidden = 0;
  EXPECT_EQ(refusal(o), "--hidden must be positive");
  o = {};
  o.kind = ModelKind::kGat;
  o.out_heads = 0;
  EXPECT_EQ(refusal(o), "--heads and --out-heads must be positive");
}

TEST(Model, ParametersAreNamedByLayer) {
  Model sage(SmallConfig(ModelKind::kSage));
  std::vector<std::string> names;
  for (auto& p : sage.Parameters()) names.push_back(p.name);
  std::vector<std::string> want = {"layers.0.w_self", "layers.0.w_neigh", "layers.0.bias",
                                   "layers.1.w_self", "layers.1.w_neigh", "layers.1.bias"};
  EXPECT_EQ(names, want);
  Model gat(SmallConfig(ModelKind::kGat));
  auto params = gat.Parameters();
  ASSERT_EQ(params.size(), 8u);
  EXPECT_EQ(params[0].value.cols(), 6u);  // 2 heads x 3 hidden, concatenated
  EXPECT_EQ(params[4].value.rows(), 6u);  // the last layer reads the concatenation
  EXPECT_EQ(params[7].value.cols(), 3u);  // averaged heads: one bias per class

  ModelConfig no_bias = SmallConfig(ModelKind::kGcn);
  no_bias.bias = false;
  names.clear();
  for (auto& p : Model(no_bias).Parameters()) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"layers.0.weight", "layers.1.weight"}));
}

// What the trainer charges to the memory budget: at least the parameters and their gradients,
// growing with the largest batch and never shrinking for a smaller one (capacity is kept).
TEST(Model, AllocatedBytesCoverParametersAndGrowWithTheBatch) {
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    SCOPED_TRACE(std::string(ModelKindName(kind)));
    Model model(SmallConfig(kind));
    size_t parameter_bytes = 0;
    for (const auto& p : model.Parameters()) {
      parameter_bytes += 2 * p.value.rows() * p.value.cols() * sizeof(float);
    }
    const size_t fresh = model.AllocatedBytes();
    EXPECT_GE(fresh, parameter_bytes);
    auto run = [&](uint32_t inputs, uint32_t mid, uint32_t seeds) {
      std::vector<Block> blocks = RandomBlocks({inputs, mid, seeds}, 4, inputs);
      Matrix features = RandomMatrix<float>(inputs, 4, 3);
      std::vector<float> norm = RandomNorms<float>(inputs);
      MatrixSpan<const float> logits = model.Forward(blocks, features.span(), norm, true, 1);
      Matrix grad(logits.rows(), logits.cols());
      grad.Fill(0.1f);
      model.Backward(grad.span());
      return model.AllocatedBytes();
    };
    const size_t small = run(40, 20, 10);
    const size_t large = run(400, 200, 100);
    // Saved activations alone: at least one float per input feature of the larger batch.
    EXPECT_GE(large, small + (400 - 40) * 4 * sizeof(float));
    EXPECT_EQ(run(40, 20, 10), large);
  }
}

}  // namespace
}  // namespace strata
