#include "strata/neighbor_sampler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include "common/random.h"
#include "sampling/local_ids.h"
#include "sampling/sampled_batch_expectations.h"
#include "strata/error.h"
#include "strata/generate.h"
#include "strata/import.h"
#include "test_util.h"

namespace strata {
namespace {

constexpr uint64_t kBudgetBytes = uint64_t{256} << 20;

DatasetMeta Generate(const std::string& out, uint64_t nodes, uint32_t node_id_bytes = 0) {
  GenerateOptions o;
  o.out = out;
  o.nodes = nodes;
  o.avg_degree = 10;
  o.feature_dim = 4;
  o.classes = 3;
  o.seed = 5;
  o.train_ratio = 0.6;  // enough seeds for batches big enough to run the parallel paths
  o.node_id_bytes = node_id_bytes;
  o.memory_budget_bytes = uint64_t{64} << 20;
  return GenerateDataset(o);
}

// A dataset from "src dst" lines; nodes without edges up to the largest id exist.
DatasetMeta ImportEdges(const testing::ScratchDir& dir, const std::string& edges) {
  testing::WriteTextFile(dir / "edges.txt", edges);
  ImportOptions o;
  o.out = dir / "g";
  o.memory_budget_bytes = uint64_t{64} << 20;
  EdgeListSources sources;
  sources.edge_list = dir / "edges.txt";
  return ImportEdgeList(sources, o);
}

// A generated SBM graph (5000 nodes, power-law degrees, 3000 training nodes), built once.
class NeighborSamplerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::ScratchDir();
    budget_ = new MemoryBudget(kBudgetBytes);
    meta_ = new DatasetMeta(Generate(*dir_ / "g", 5000));
    graph_ = new CscGraph(Dataset::Open(*dir_ / "g"), *budget_);
    train_ = new std::vector<uint64_t>(Dataset::Open(*dir_ / "g").ReadSplit(Split::kTrain));
  }
  static void TearDownTestSuite() {
    delete train_;
    delete graph_;
    delete meta_;
    delete budget_;
    delete dir_;
  }
  static testing::ScratchDir* dir_;
  static MemoryBudget* budget_;
  static DatasetMeta* meta_;
  static CscGraph* graph_;
  static std::vector<uint64_t>* train_;
};

testing::ScratchDir* NeighborSamplerTest::dir_ = nullptr;
MemoryBudget* NeighborSamplerTest::budget_ = nullptr;
DatasetMeta* NeighborSamplerTest::meta_ = nullptr;
CscGraph* NeighborSamplerTest::graph_ = nullptr;
std::vector<uint64_t>* NeighborSamplerTest::train_ = nullptr;

TEST_F(NeighborSamplerTest, BlocksHoldInvariantsAndRealEdges) {
  const std::vector<int> fanouts = {4, 3, 2};
  NeighborSampler sampler(*graph_, *train_, fanouts, 1000, 7, *budget_, 2);
  ASSERT_GE(train_->size(), 2000u);
  for (uint64_t b = 0; b < sampler.batches_per_epoch(); ++b) {
    SampledBatch batch = sampler.Sample(1, b);
    EXPECT_EQ(batch.epoch, 1u);
    EXPECT_EQ(batch.index, b);
    ExpectValidBatch(*graph_, batch, fanouts, sampler.BatchSeeds(1, b));
  }
}

TEST_F(NeighborSamplerTest, BigFanoutsTakeDistinctSubsetsOfHubs) {
  // Fanouts above the linear-scan limit take Floyd's bitmap path on the hubs.
  const std::vector<int> fanouts = {40, 60};
  NeighborSampler sampler(*graph_, *train_, fanouts, 500, 3, *budget_, 2);
  ExpectValidBatch(*graph_, sampler.Sample(0, 0), fanouts, sampler.BatchSeeds(0, 0));
}

TEST_F(NeighborSamplerTest, MinusOneTakesAllNeighbours) {
  const std::vector<int> fanouts = {-1, 5};
  NeighborSampler sampler(*graph_, *train_, fanouts, 300, 3, *budget_, 2);
  SampledBatch batch = sampler.Sample(0, 2);
  ExpectValidBatch(*graph_, batch, fanouts, sampler.BatchSeeds(0, 2));
  EXPECT_EQ(batch.blocks[0].num_edges(), [&] {
    uint64_t total = 0;
    for (uint32_t d = 0; d < batch.blocks[0].num_dst(); ++d) {
      total += graph_->InDegree(batch.blocks[0].src_nodes[d]);
    }
    return total;
  }());
}

// Fanout 0 (an MLP's) keeps no in-edge, with LABOR too: every block's sources are its seeds.
TEST_F(NeighborSamplerTest, ZeroTakesNoNeighbours) {
  for (bool labor : {false, true}) {
    NeighborSampler sampler(*graph_, *train_, {0, 0}, 300, 3, *budget_, 2);
    LaborOptions options;
    options.enabled = labor;
    sampler.set_labor(options);
    const SampledBatch batch = sampler.Sample(0, 1);
    const std::vector<uint64_t> seeds = sampler.BatchSeeds(0, 1);
    for (const Block& block : batch.blocks) {
      EXPECT_EQ(block.num_edges(), 0u);
      EXPECT_EQ(block.src_nodes, seeds);
      EXPECT_EQ(block.num_dst(), seeds.size());
    }
  }
}

TEST_F(NeighborSamplerTest, FullNeighborhoodTakesEveryInEdge) {
  NeighborSampler sampler(*graph_, *train_, {10, 10}, 100, 3, *budget_, 2);
  std::vector<uint64_t> seeds(train_->begin(), train_->begin() + 700);
  SampledBatch batch = sampler.SampleFullNeighborhood(seeds);
  ExpectValidBatch(*graph_, batch, {-1, -1}, seeds);
  // No randomness: a second call and another thread count agree.
  NeighborSampler one_thread(*graph_, *train_, {3, 3}, 100, 99, *budget_, 1);
  ExpectSameBatch(batch, one_thread.SampleFullNeighborhood(seeds));
}

TEST_F(NeighborSamplerTest, SampleSeedsUsesFanoutsAndIndependentStreams) {
  const std::vector<int> fanouts = {3, 3};
  NeighborSampler sampler(*graph_, *train_, fanouts, 100, 3, *budget_, 2);
  std::vector<uint64_t> seeds(train_->begin() + 100, train_->begin() + 600);
  SampledBatch a = sampler.SampleSeeds(seeds, 0);
  ExpectValidBatch(*graph_, a, fanouts, seeds);
  EXPECT_EQ(a.index, 0u);
  ExpectSameBatch(a, sampler.SampleSeeds(seeds, 0));
  EXPECT_NE(a.blocks[0].src_nodes, sampler.SampleSeeds(seeds, 1).blocks[0].src_nodes);
}

TEST_F(NeighborSamplerTest, EpochSeedsPartitionTheTrainingSet) {
  const uint64_t n = train_->size();
  std::vector<uint64_t> sorted_train = *train_;
  std::sort(sorted_train.begin(), sorted_train.end());
  for (bool drop_last : {false, true}) {
    SCOPED_TRACE(drop_last ? "drop_last" : "keep last");
    NeighborSampler sampler(*graph_, *train_, {2}, 256, 1, *budget_, 1, {.drop_last = drop_last});
    EXPECT_EQ(sampler.batches_per_epoch(), drop_last ? n / 256 : (n + 255) / 256);
    std::vector<uint64_t> all;
    for (uint64_t b = 0; b < sampler.batches_per_epoch(); ++b) {
      std::vector<uint64_t> seeds = sampler.BatchSeeds(4, b);
      EXPECT_EQ(seeds.size(), std::min<uint64_t>(256, n - b * 256));
      EXPECT_EQ(sampler.Sample(4, b).seeds(), seeds);
      all.insert(all.end(), seeds.begin(), seeds.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_TRUE(std::adjacent_find(all.begin(), all.end()) == all.end());
    if (!drop_last) {
      EXPECT_EQ(all, sorted_train);
    } else {
      EXPECT_EQ(all.size(), n / 256 * 256);
      EXPECT_TRUE(std::includes(sorted_train.begin(), sorted_train.end(), all.begin(), all.end()));
    }
    EXPECT_THROW(sampler.Sample(4, sampler.batches_per_epoch()), Error);
  }
}

// Even batches: the same seeds in the same order as the default cut, as ceil(n / size)
// batches of floor or ceil of n / batches seeds each, never more than the batch size.
TEST_F(NeighborSamplerTest, EvenBatchesDifferInSizeByAtMostOne) {
  const uint64_t n = train_->size();
  for (uint64_t size : {uint64_t{256}, n - 1, n, uint64_t{7}}) {
    SCOPED_TRACE(size);
    NeighborSampler plain(*graph_, *train_, {2}, size, 1, *budget_, 1);
    NeighborSampler even(*graph_, *train_, {2}, size, 1, *budget_, 1, {.even_batches = true});
    const uint64_t batches = (n + size - 1) / size;
    ASSERT_EQ(even.batches_per_epoch(), batches);
    std::vector<uint64_t> plain_order, even_order;
    for (uint64_t b = 0; b < batches; ++b) {
      std::vector<uint64_t> seeds = even.BatchSeeds(3, b);
      EXPECT_GE(seeds.size(), n / batches);
      EXPECT_LE(seeds.size(), std::min(size, (n + batches - 1) / batches));
      even_order.insert(even_order.end(), seeds.begin(), seeds.end());
      seeds = plain.BatchSeeds(3, b);
      plain_order.insert(plain_order.end(), seeds.begin(), seeds.end());
    }
    EXPECT_EQ(even_order, plain_order);
  }
}

// Each destination's sampled in-neighbours (global ids, with the edge weights) per layer.
std::map<std::pair<size_t, uint64_t>, std::multiset<std::pair<uint64_t, float>>> Neighbourhoods(
    const SampledBatch& batch) {
  std::map<std::pair<size_t, uint64_t>, std::multiset<std::pair<uint64_t, float>>> out;
  for (size_t l = 0; l < batch.blocks.size(); ++l) {
    const Block& block = batch.blocks[l];
    for (uint32_t d = 0; d < block.num_dst(); ++d) {
      auto& sources = out[{l, block.src_nodes[d]}];
      for (uint32_t e = block.indptr[d]; e < block.indptr[d + 1]; ++e) {
        const float weight = block.edge_weights.empty() ? 1.0f : block.edge_weights[e];
        sources.emplace(block.src_nodes[block.indices[e]], weight);
      }
    }
  }
  return out;
}

// A batch sampled in pieces: its seeds cut into consecutive runs differing in size by at most
// one, and every destination of a piece drawing the in-neighbours (and LABOR-0's weights) the
// whole batch draws for it, with the default and the even cut.
TEST_F(NeighborSamplerTest, PiecesCutABatchAndDrawItsNeighbourhoods) {
  constexpr uint32_t kPieces = 3;
  for (bool labor : {false, true}) {
    for (bool even : {false, true}) {
      SCOPED_TRACE(std::string(labor ? "labor" : "neighbor") + (even ? ", even" : ""));
      NeighborSampler whole(*graph_, *train_, {3, 4}, 256, 1, *budget_, 2, {.even_batches = even});
      NeighborSampler pieces(*graph_, *train_, {3, 4}, 256, 1, *budget_, 2,
                             {.even_batches = even, .pieces = kPieces});
      whole.set_labor({.enabled = labor});
      pieces.set_labor({.enabled = labor});
      ASSERT_EQ(pieces.batches_per_epoch(), kPieces * whole.batches_per_epoch());
      for (uint64_t b = 0; b < whole.batches_per_epoch(); ++b) {
        const SampledBatch all = whole.Sample(2, b);
        const auto expected = Neighbourhoods(all);
        std::vector<uint64_t> seeds;
        for (uint32_t j = 0; j < kPieces; ++j) {
          const SampledBatch part = pieces.Sample(2, b * kPieces + j);
          EXPECT_EQ(part.index, b * kPieces + j);
          const std::vector<uint64_t> part_seeds = part.seeds();
          EXPECT_GE(part_seeds.size(), all.seeds().size() / kPieces);
          EXPECT_LE(part_seeds.size(), (all.seeds().size() + kPieces - 1) / kPieces);
          seeds.insert(seeds.end(), part_seeds.begin(), part_seeds.end());
          for (const auto& [where, sources] : Neighbourhoods(part)) {
            ASSERT_EQ(sources, expected.at(where))
                << "layer " << where.first << " node " << where.second << " batch " << b;
          }
        }
        EXPECT_EQ(seeds, all.seeds());
      }
    }
  }
  EXPECT_THROW(NeighborSampler(*graph_, *train_, {3}, 256, 1, *budget_, 1, {.pieces = 0}), Error);
}

TEST_F(NeighborSamplerTest, UnshuffledOrderKeepsTheSplitsOrder) {
  NeighborSampler sampler(*graph_, *train_, {2}, 100, 1, *budget_, 1, {.shuffle = false});
  for (uint64_t epoch : {0, 3}) {
    EXPECT_EQ(sampler.BatchSeeds(epoch, 2),
              std::vector<uint64_t>(train_->begin() + 200, train_->begin() + 300));
  }
}

// The ranks split an epoch's order as torch's DistributedSampler does: rank r takes positions
// r, r + w, ..., wrapping around so that every rank gets ceil(n / w) seeds.
TEST_F(NeighborSamplerTest, RanksShareAnEpochLikeDistributedSampler) {
  const uint64_t n = train_->size();
  const uint32_t world = 3;
  NeighborSampler whole(*graph_, *train_, {2}, n, 1, *budget_, 1);
  const std::vector<uint64_t> order = whole.BatchSeeds(2, 0);
  const uint64_t share = (n + world - 1) / world;
  std::vector<uint64_t> all;
  for (uint32_t rank = 0; rank < world; ++rank) {
    NeighborSampler sampler(*graph_, *train_, {2}, 64, 1, *budget_, 1,
                            {.rank = rank, .world_size = world});
    EXPECT_EQ(sampler.seeds_per_epoch(), share);
    EXPECT_EQ(sampler.batches_per_epoch(), (share + 63) / 64);
    std::vector<uint64_t> seeds;
    for (uint64_t b = 0; b < sampler.batches_per_epoch(); ++b) {
      std::vector<uint64_t> batch = sampler.BatchSeeds(2, b);
      seeds.insert(seeds.end(), batch.begin(), batch.end());
    }
    ASSERT_EQ(seeds.size(), share);
    for (uint64_t k = 0; k < share; ++k) EXPECT_EQ(seeds[k], order[(rank + k * world) % n]);
    all.insert(all.end(), seeds.begin(), seeds.end());
  }
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  EXPECT_EQ(all.size(), n);  // every seed on some rank; the padding repeats only a few
  EXPECT_THROW(
      NeighborSampler(*graph_, *train_, {2}, 64, 1, *budget_, 1, {.rank = 3, .world_size = 3}),
      Error);
}

TEST_F(NeighborSamplerTest, ShufflesDifferBetweenEpochsAndSeeds) {
  NeighborSampler sampler(*graph_, *train_, {2}, 500, 1, *budget_, 1);
  NeighborSampler same_seed(*graph_, *train_, {2}, 500, 1, *budget_, 1);
  NeighborSampler other_seed(*graph_, *train_, {2}, 500, 2, *budget_, 1);
  EXPECT_NE(sampler.BatchSeeds(0, 0), sampler.BatchSeeds(1, 0));
  EXPECT_NE(sampler.BatchSeeds(1, 0), sampler.BatchSeeds(2, 0));
  EXPECT_NE(sampler.BatchSeeds(0, 0), other_seed.BatchSeeds(0, 0));
  // Epochs asked out of order, beyond the cached ones, still give the same permutation.
  std::vector<uint64_t> epoch1 = sampler.BatchSeeds(1, 3);
  for (uint64_t e : {5, 0, 7, 2}) sampler.BatchSeeds(e, 0);
  EXPECT_EQ(sampler.BatchSeeds(1, 3), epoch1);
  EXPECT_EQ(same_seed.BatchSeeds(1, 3), epoch1);
  // The seeds are not left in the split's order.
  EXPECT_NE(sampler.BatchSeeds(0, 0),
            std::vector<uint64_t>(train_->begin(), train_->begin() + 500));
}

TEST_F(NeighborSamplerTest, BatchDependsOnlyOnSeedEpochAndIndex) {
  const std::vector<int> fanouts = {10, 10};
  NeighborSampler one(*graph_, *train_, fanouts, 1000, 42, *budget_, 1);
  NeighborSampler two(*graph_, *train_, fanouts, 1000, 42, *budget_, 2);
  NeighborSampler three(*graph_, *train_, fanouts, 1000, 42, *budget_, 3);
  const uint64_t batches = one.batches_per_epoch();
  std::vector<SampledBatch> reference;
  for (uint64_t b = 0; b < batches; ++b) reference.push_back(one.Sample(2, b));
  // The first layer is big enough for the parallel picking and relabelling paths.
  ASSERT_GE(reference[0].blocks[0].num_dst() + reference[0].blocks[0].num_edges(), 16384u);
  for (uint64_t b = batches; b-- > 0;) ExpectSameBatch(two.Sample(2, b), reference[b]);
  three.Sample(3, 1);
  three.Sample(1, 0);
  for (uint64_t b = 0; b < batches; ++b) ExpectSameBatch(three.Sample(2, b), reference[b]);
  // Different batches and epochs draw differently.
  EXPECT_NE(reference[0].blocks[0].src_nodes, one.Sample(3, 0).blocks[0].src_nodes);

  // Two threads sampling concurrently from one sampler, each batch twice, in opposite orders.
  NeighborSampler shared(*graph_, *train_, fanouts, 1000, 42, *budget_, 2);
  std::vector<std::vector<SampledBatch>> got(2);
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&, w] {
      for (uint64_t i = 0; i < batches; ++i) {
        got[w].push_back(shared.Sample(2, w == 0 ? i : batches - 1 - i));
      }
    });
  }
  for (auto& t : workers) t.join();
  for (uint64_t i = 0; i < batches; ++i) {
    ExpectSameBatch(got[0][i], reference[i]);
    ExpectSameBatch(got[1][i], reference[batches - 1 - i]);
  }
}

// The topology on disk (with a partial adjacency cache) gives the very same batches.
TEST_F(NeighborSamplerTest, TopologyOnDiskGivesTheSameBatches) {
  TopologyOptions options;
  options.placement = TopologyPlacement::kDisk;
  options.adjacency_cache_bytes = meta_->num_edges * 8 / 4;
  CscGraph disk(Dataset::Open(*dir_ / "g"), *budget_, options);
  NeighborSampler in_memory(*graph_, *train_, {10, 5, -1}, 64, 3, *budget_, 2);
  NeighborSampler on_disk(disk, *train_, {10, 5, -1}, 64, 3, *budget_, 2);
  for (uint64_t b = 0; b < 5; ++b) ExpectSameBatch(in_memory.Sample(1, b), on_disk.Sample(1, b));
  std::vector<uint64_t> seeds(train_->begin(), train_->begin() + 50);
  ExpectSameBatch(in_memory.SampleFullNeighborhood(seeds), on_disk.SampleFullNeighborhood(seeds));
}

TEST_F(NeighborSamplerTest, RejectsBadArguments) {
  EXPECT_THROW(NeighborSampler(*graph_, *train_, {}, 10, 1, *budget_, 1), Error);
  EXPECT_THROW(NeighborSampler(*graph_, *train_, {-2}, 10, 1, *budget_, 1), Error);
  EXPECT_THROW(NeighborSampler(*graph_, *train_, {5}, 0, 1, *budget_, 1), Error);
  EXPECT_THROW(NeighborSampler(*graph_, {graph_->num_nodes()}, {5}, 10, 1, *budget_, 1), Error);
  NeighborSampler sampler(*graph_, *train_, {5}, 10, 1, *budget_, 1);
  const std::vector<uint64_t> repeated = {1, 2, 1};
  EXPECT_THROW(sampler.SampleSeeds(repeated, 0), Error);
  const std::vector<uint64_t> out_of_range = {graph_->num_nodes()};
  EXPECT_THROW(sampler.SampleFullNeighborhood(out_of_range), Error);
}

// Hand-made graph: in-neighbours 0 <- {1, 2, 3}, 1 <- {0, 2}, 2 <- {3}, 3 <- {}, 4 <- {0..3}.
TEST(NeighborSampler, HandMadeGraphGivesDglNumbering) {
  testing::ScratchDir dir;
  DatasetMeta meta = ImportEdges(dir, "1 0\n2 0\n3 0\n0 1\n2 1\n3 2\n0 4\n1 4\n2 4\n3 4\n");
  MemoryBudget budget(kBudgetBytes);
  CscGraph graph(Dataset::Open(dir / "g"), budget);
  NeighborSampler sampler(graph, {4, 1}, {-1, -1}, 2, 0, budget, 1);
  const std::vector<uint64_t> seeds = {4, 1};
  SampledBatch batch = sampler.SampleFullNeighborhood(seeds);
  ASSERT_EQ(batch.blocks.size(), 2u);
  const Block& out = batch.blocks[1];
  EXPECT_EQ(out.src_nodes, (std::vector<uint64_t>{4, 1, 0, 2, 3}));
  EXPECT_EQ(out.num_dst(), 2u);
  EXPECT_EQ(out.indptr, (std::vector<uint32_t>{0, 4, 6}));
  EXPECT_EQ(out.indices, (std::vector<uint32_t>{2, 1, 3, 4, 2, 3}));
  const Block& in = batch.blocks[0];
  EXPECT_EQ(in.src_nodes, (std::vector<uint64_t>{4, 1, 0, 2, 3}));
  EXPECT_EQ(in.num_dst(), 5u);
  EXPECT_EQ(in.indptr, (std::vector<uint32_t>{0, 4, 6, 9, 10, 10}));
  EXPECT_EQ(in.indices, (std::vector<uint32_t>{2, 1, 3, 4, 2, 3, 1, 3, 4, 4}));
  // Sampled training batches of the same graph and fanouts are the same blocks up to order.
  ExpectValidBatch(graph, sampler.Sample(0, 0), {-1, -1}, sampler.BatchSeeds(0, 0));
}

// A graph in memory from its in-neighbour lists.
CscGraph GraphOf(const std::vector<std::vector<uint32_t>>& in_neighbors, MemoryBudget& budget) {
  uint64_t edges = 0;
  for (const auto& list : in_neighbors) edges += list.size();
  ChargedArray<uint64_t> indptr(budget, in_neighbors.size() + 1, "test graph");
  ChargedArray<uint32_t> indices(budget, edges, "test graph");
  indptr[0] = 0;
  for (size_t v = 0, e = 0; v < in_neighbors.size(); ++v) {
    for (uint32_t u : in_neighbors[v]) indices[e++] = u;
    indptr[v + 1] = indptr[v] + in_neighbors[v].size();
  }
  return CscGraph(std::move(indptr), std::move(indices), budget);
}

// With one graph per layer, layer l's picks come from graph l only: here the output layer
// (graph 1) links 0 <- {1, 2} and the input layer (graph 0) 0 <- {3}, 1 <- {4}, 2 <- {5}.
TEST(NeighborSampler, EachLayerDrawsFromItsOwnGraph) {
  MemoryBudget budget(kBudgetBytes);
  const CscGraph input = GraphOf({{3}, {4}, {5}, {}, {}, {}}, budget);
  const CscGraph output = GraphOf({{1, 2}, {}, {}, {}, {}, {}}, budget);
  const NeighborSampler sampler({&input, &output}, {0}, {-1, -1}, 1, 0, budget, 1);
  const SampledBatch batch = sampler.Sample(0, 0);
  ASSERT_EQ(batch.blocks.size(), 2u);
  EXPECT_EQ(batch.blocks[1].src_nodes, (std::vector<uint64_t>{0, 1, 2}));
  EXPECT_EQ(batch.blocks[1].indices, (std::vector<uint32_t>{1, 2}));
  EXPECT_EQ(batch.blocks[0].src_nodes, (std::vector<uint64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(batch.blocks[0].indptr, (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(batch.blocks[0].indices, (std::vector<uint32_t>{3, 4, 5}));
  const CscGraph smaller = GraphOf({{}, {}}, budget);
  EXPECT_THROW(NeighborSampler({&input, &smaller}, {0}, {-1, -1}, 1, 0, budget, 1), Error);
  EXPECT_THROW(NeighborSampler({&input, &output, &input}, {0}, {-1, -1}, 1, 0, budget, 1), Error);
}

// Node 0 has in-neighbours 1..100. Over many draws every neighbour must be chosen with
// frequency fanout / degree: a chi-square test per fanout, one for each of Floyd's paths.
TEST(NeighborSampler, NeighbourChoiceIsUniform) {
  testing::ScratchDir dir;
  std::string edges;
  constexpr uint64_t kDegree = 100;
  for (uint64_t u = 1; u <= kDegree; ++u) edges += std::to_string(u) + " 0\n";
  DatasetMeta meta = ImportEdges(dir, edges);
  MemoryBudget budget(kBudgetBytes);
  CscGraph graph(Dataset::Open(dir / "g"), budget);
  ASSERT_EQ(graph.InDegree(0), kDegree);
  const std::vector<uint64_t> seed = {0};
  for (int fanout : {5, 40}) {
    SCOPED_TRACE(::testing::Message() << "fanout " << fanout);
    NeighborSampler sampler(graph, {0}, {fanout}, 1, 17, budget, 1);
    constexpr uint64_t kDraws = 4000;
    std::vector<uint64_t> count(kDegree + 1, 0);
    for (uint64_t s = 0; s < kDraws; ++s) {
      SampledBatch batch = sampler.SampleSeeds(seed, s);
      const Block& b = batch.blocks[0];
      ASSERT_EQ(b.num_edges(), static_cast<uint64_t>(fanout));
      for (uint32_t idx : b.indices) ++count[b.src_nodes[idx]];
    }
    const double expected = double(kDraws) * fanout / kDegree;
    double chi2 = 0;
    for (uint64_t u = 1; u <= kDegree; ++u) {
      chi2 += (count[u] - expected) * (count[u] - expected) / expected;
    }
    // Without replacement each count's variance is below the binomial's, so chi2 sits under
    // its 99 degrees of freedom on average; 160 is far in the tail (p < 1e-4).
    EXPECT_LT(chi2, 160) << "neighbour counts are not uniform";
    EXPECT_GT(chi2, 20) << "neighbour counts are suspiciously even";
  }
}

TEST(NeighborSampler, WorksWithEightByteIds) {
  testing::ScratchDir dir;
  DatasetMeta meta = Generate(dir / "g", 3000, 8);
  ASSERT_EQ(meta.node_id_bytes, 8u);
  MemoryBudget budget(kBudgetBytes);
  CscGraph graph(Dataset::Open(dir / "g"), budget);
  std::vector<uint64_t> train = Dataset::Open(dir / "g").ReadSplit(Split::kTrain);
  const std::vector<int> fanouts = {5, 5};
  NeighborSampler one(graph, train, fanouts, 800, 9, budget, 1);
  NeighborSampler two(graph, train, fanouts, 800, 9, budget, 2);
  for (uint64_t b = 0; b < one.batches_per_epoch(); ++b) {
    SampledBatch batch = two.Sample(0, b);
    ExpectValidBatch(graph, batch, fanouts, one.BatchSeeds(0, b));
    ExpectSameBatch(batch, one.Sample(0, b));
  }
}

// AssignLocalIds on its own: DGL's first-appearance numbering, whatever the thread count,
// against a plain reference, on inputs big enough for the threaded path, including layers
// where whole ranges are destinations.
TEST(NeighborSamplerLocalIds, FirstAppearanceNumberingWhateverThreads) {
  LocalIdScratch scratch;  // reused across calls, as the sampler does
  Rng rng(3);
  for (auto [num_dst, num_picked] :
       {std::pair<uint64_t, uint64_t>{5000, 60000}, {30000, 10000}, {20000, 0}, {0, 20000}}) {
    SCOPED_TRACE(::testing::Message() << num_dst << " destinations, " << num_picked << " edges");
    std::vector<uint64_t> dst(num_dst);
    for (uint64_t i = 0; i < num_dst; ++i) dst[i] = i * 7919 % 100003;  // distinct
    std::vector<uint64_t> picked(num_picked);
    for (uint64_t& v : picked) v = rng.Below(50000) * 3;  // repeats, some of them destinations

    std::vector<uint64_t> want_src(dst.begin(), dst.end());
    std::vector<uint32_t> want_idx;
    std::map<uint64_t, uint32_t> local;
    for (uint32_t i = 0; i < dst.size(); ++i) local[dst[i]] = i;
    for (uint64_t v : picked) {
      auto [it, inserted] = local.emplace(v, static_cast<uint32_t>(want_src.size()));
      if (inserted) want_src.push_back(v);
      want_idx.push_back(it->second);
    }
    for (unsigned threads : {1u, 2u, 3u, 4u, 7u}) {
      std::vector<uint64_t> src;
      std::vector<uint32_t> idx;
      AssignLocalIds(dst, picked, threads, scratch, src, idx);
      EXPECT_EQ(src, want_src) << threads << " threads";
      EXPECT_EQ(idx, want_idx) << threads << " threads";
    }
    if (num_dst > 1) {
      // A destination given twice, far apart (in different ranges when threaded), is an error.
      dst.back() = dst.front();
      std::vector<uint64_t> src;
      std::vector<uint32_t> idx;
      for (unsigned threads : {1u, 4u}) {
        EXPECT_THROW(AssignLocalIds(dst, picked, threads, scratch, src, idx), Error);
      }
    }
  }
  std::vector<uint64_t> src;
  std::vector<uint32_t> idx;
  AssignLocalIds({}, {}, 4, scratch, src, idx);
  EXPECT_TRUE(src.empty() && idx.empty());
}

}  // namespace
}  // namespace strata
