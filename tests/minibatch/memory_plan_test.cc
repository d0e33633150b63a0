// The memory plan's bounds hold: no batch a sampler draws is larger, layer by layer, than
// BoundBatch says, and no model's buffers grow past ModelBytesBound over such batches.
#include "minibatch/memory_plan.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "common/random.h"
#include "minibatch/batch_bound.h"
#include "nn/model.h"
#include "strata/generate.h"
#include "strata/neighbor_sampler.h"
#include "test_util.h"

namespace strata {
namespace {

// A power-law graph with hubs: the batches whose bounds are far from the average.
class BatchBoundTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GenerateOptions g = testing::SmallGraph(dir_ / "rmat", 3000, 8, 4, 10, 3);
    g.graph = GraphModel::kRmat;
    GenerateDataset(g);
    dataset_ = std::make_unique<Dataset>(Dataset::Open(dir_ / "rmat"));
    graph_ = std::make_unique<CscGraph>(*dataset_, budget_);
    degrees_ = std::make_unique<DegreeProfile>(*graph_);
  }

  std::vector<uint64_t> AllNodes() const {
    std::vector<uint64_t> ids(graph_->num_nodes());
    for (uint64_t v = 0; v < ids.size(); ++v) ids[v] = v;
    return ids;
  }

  testing::ScratchDir dir_;
  MemoryBudget budget_{uint64_t{256} << 20};
  std::unique_ptr<Dataset> dataset_;
  std::unique_ptr<CscGraph> graph_;
  std::unique_ptr<DegreeProfile> degrees_;
};

void ExpectWithin(const SampledBatch& batch, const BatchBound& bound) {
  ASSERT_EQ(batch.blocks.size(), bound.layers.size());
  for (size_t l = 0; l < bound.layers.size(); ++l) {
    SCOPED_TRACE(l);
    EXPECT_LE(batch.blocks[l].num_dst(), bound.layers[l].dst);
    EXPECT_LE(batch.blocks[l].num_src(), bound.layers[l].src);
    EXPECT_LE(batch.blocks[l].num_edges(), bound.layers[l].edges);
  }
  EXPECT_LE(BlockBytes(batch), bound.BlockBytes());
}

TEST(DegreeProfile, TopCappedSumTakesTheLargestCappedDegrees) {
  MemoryBudget budget(1 << 20);
  // In-degrees 5, 1, 3, 0, 3.
  const std::vector<uint64_t> indptr = {0, 5, 6, 9, 9, 12};
  const std::vector<uint32_t> indices(12, 0);
  const CscGraph graph(testing::ChargedArrayOf(budget, indptr),
                       testing::ChargedArrayOf(budget, indices), budget);
  const DegreeProfile degrees(graph);
  EXPECT_EQ(degrees.TopCappedSum(2, 10), 8u);
  EXPECT_EQ(degrees.TopCappedSum(2, 2), 4u);
  EXPECT_EQ(degrees.TopCappedSum(3, 3), 9u);
  EXPECT_EQ(degrees.TopCappedSum(10, 100), 12u);
  EXPECT_EQ(degrees.TopCappedSum(0, 100), 0u);
}

TEST_F(BatchBoundTest, NoSampledBatchExceedsItsBound) {
  struct Case {
    std::vector<int> fanouts;
    bool labor;
  };
  for (const Case& c :
       {Case{{4, 3}, false}, Case{{-1, -1}, false}, Case{{2, 2, 2}, false}, Case{{4, 3}, true}}) {
    SCOPED_TRACE(::testing::PrintToString(c.fanouts) + (c.labor ? " labor" : ""));
    NeighborSampler sampler(*graph_, AllNodes(), c.fanouts, 50, 7, budget_, 2);
    if (c.labor) sampler.set_labor(LaborOptions{.enabled = true});
    const BatchBound bound = BoundBatch(*degrees_, c.fanouts, 50, c.labor);
    for (uint64_t b = 0; b < sampler.batches_per_epoch(); ++b) {
      ExpectWithin(sampler.Sample(0, b), bound);
    }
  }
}

TEST_F(BatchBoundTest, HubsReachTheirFullNeighbourhoodBound) {
  NeighborSampler sampler(*graph_, {}, {-1, -1}, 1, 7, budget_, 1);
  const BatchBound one = BoundBatch(*degrees_, std::vector<int>{-1, -1}, 1, false);
  uint64_t hub = 0;
  for (uint64_t v = 0; v < graph_->num_nodes(); ++v) {
    if (graph_->InDegree(v) > graph_->InDegree(hub)) hub = v;
  }
  const std::vector<uint64_t> seed = {hub};
  const SampledBatch batch = sampler.SampleFullNeighborhood(seed);
  ExpectWithin(batch, one);
  // The output layer's bound is exact for the largest hub.
  EXPECT_EQ(batch.blocks.back().num_edges(), one.layers.back().edges);
}

TEST_F(BatchBoundTest, ModelBuffersStayWithinTheirBound) {
  const std::vector<int> fanouts = {5, 4};
  NeighborSampler sampler(*graph_, AllNodes(), fanouts, 40, 3, budget_, 2);
  const BatchBound bound = BoundBatch(*degrees_, fanouts, 40, false);
  for (ModelKind kind : {ModelKind::kSage, ModelKind::kGcn, ModelKind::kGat}) {
    SCOPED_TRACE(static_cast<int>(kind));
    ModelConfig config;
    config.kind = kind;
    config.layers = 2;
    config.hidden = 16;
    config.heads = 2;
    config.in_dim = dataset_->meta().feature_dim;
    config.num_classes = dataset_->meta().num_classes;
    config.input_dropout = kind == ModelKind::kGcn ? 0.5 : 0;
    config.attention_dropout = 0.2;
    Model model(config);
    const uint64_t limit = ModelBytesBound(config, bound.layers);
    Rng rng(5);
    for (uint64_t b = 0; b < 12; ++b) {
      const SampledBatch batch = sampler.Sample(0, b);
      const uint64_t rows = batch.input_nodes().size();
      std::vector<float> features(rows * config.in_dim);
      for (float& x : features) x = static_cast<float>(rng.Uniform());
      const std::vector<float> norm(rows, 0.5f);
      auto logits = model.Forward(
          batch.blocks, {features.data(), rows, config.in_dim},
          kind == ModelKind::kGcn ? std::span<const float>(norm) : std::span<const float>(),
          b % 3 != 0, b);
      Matrix grad(logits.rows(), logits.cols());
      for (size_t i = 0; i < grad.rows() * grad.cols(); ++i) grad.data()[i] = 0.01f;
      if (b % 3 != 0) model.Backward(grad.span());
      EXPECT_LE(model.AllocatedBytes(), limit) << "batch " << b;
    }
    // With no batch: the parameters and their gradients, which a new model holds.
    const uint64_t fresh = Model(config).AllocatedBytes();
    EXPECT_GE(ModelBytesBound(config, {}), fresh);
    EXPECT_LE(ModelBytesBound(config, {}), fresh + 64);
  }
}

// A batch in pieces is planned as its largest piece; a budget too small for the whole batches
// names the fewest pieces (doubling) whose plan it holds.
TEST_F(BatchBoundTest, APlanRefusedForItsBatchesNamesThePiecesThatFit) {
  SamplingOptions sampling;
  sampling.fanouts = {10, 10};
  sampling.batch_size = 300;
  MiniBatchMemoryInputs in;
  in.degrees = degrees_.get();
  in.model.kind = ModelKind::kSage;
  in.model.layers = 2;
  in.model.hidden = 64;
  in.model.in_dim = dataset_->meta().feature_dim;
  in.model.num_classes = dataset_->meta().num_classes;
  in.sampling = &sampling;
  in.sampled_eval = false;
  in.train_ids = 1000;
  in.available_bytes = uint64_t{1} << 40;
  const MiniBatchMemoryPlan whole = PlanMiniBatchMemory(in);
  EXPECT_EQ(whole.train.layers.back().dst, 300u);
  sampling.batch_pieces = 4;
  EXPECT_EQ(PieceSeeds(sampling), 75u);
  const MiniBatchMemoryPlan quarters = PlanMiniBatchMemory(in);
  EXPECT_EQ(quarters.train.layers.back().dst, 75u);
  EXPECT_LT(quarters.batch_reserve_bytes, whole.batch_reserve_bytes);

  sampling.batch_pieces = 1;
  in.available_bytes = whole.needed_bytes() - 1;
  const MiniBatchMemoryPlan refused = PlanMiniBatchMemory(in);
  std::smatch named;
  ASSERT_TRUE(std::regex_search(refused.advice, named, std::regex("--batch-pieces ([0-9]+)")))
      << refused.advice;
  sampling.batch_pieces = static_cast<uint32_t>(std::stoul(named[1]));
  EXPECT_EQ(sampling.batch_pieces, 2u);
  EXPECT_LE(PlanMiniBatchMemory(in).needed_bytes(), in.available_bytes);
}

}  // namespace
}  // namespace strata
