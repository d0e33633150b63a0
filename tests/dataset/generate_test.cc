#include "strata/generate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "dataset/csc_reference.h"
#include "dataset/graph_models.h"
#include "dataset/hsbm_model.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/feature_store.h"
#include "test_util.h"

namespace strata {
namespace {

GenerateOptions SmallOptions(const std::string& out) {
  GenerateOptions o;
  o.out = out;
  o.nodes = 20000;
  o.avg_degree = 12;
  o.feature_dim = 16;
  o.classes = 5;
  o.seed = 42;
  o.memory_budget_bytes = uint64_t{64} << 20;
  return o;
}

template <typename T>
std::vector<T> ReadArray(const std::string& path) {
  std::string bytes = ReadWholeFile(path);
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(T));
  return values;
}

// Generates `o` into `out` on one thread and into `again` on three; expects the same dataset
// and returns its meta.
DatasetMeta GenerateOnOneAndThreeThreads(GenerateOptions o, const std::string& out,
                                         const std::string& again) {
  o.out = out;
  o.threads = 1;
  const DatasetMeta meta = GenerateDataset(o);
  o.out = again;
  o.threads = 3;
  EXPECT_EQ(GenerateDataset(o).ToJson(), meta.ToJson());
  return meta;
}

TEST(Generate, SameSeedGivesIdenticalFilesWhateverTheThreadCount) {
  testing::ScratchDir dir;
  GenerateOptions a = SmallOptions(dir / "a");
  a.threads = 1;
  GenerateOptions b = SmallOptions(dir / "b");
  b.threads = 3;
  DatasetMeta ma = GenerateDataset(a);
  DatasetMeta mb = GenerateDataset(b);
  EXPECT_EQ(ma.ToJson(), mb.ToJson());
  GenerateOptions c = SmallOptions(dir / "c");
  c.seed = 43;
  EXPECT_NE(GenerateDataset(c).files["graph/indices.bin"].xxh64,
            ma.files["graph/indices.bin"].xxh64);
}

TEST(Generate, SbmHasHomophilyLabelsAndSplits) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "g");
  o.homophily = 0.8;
  DatasetMeta meta = GenerateDataset(o);
  EXPECT_EQ(meta.num_nodes, o.nodes);
  EXPECT_EQ(meta.num_classes, o.classes);
  // Pairs are symmetric and deduplicated, so slightly fewer than nodes * avg_degree edges.
  EXPECT_GT(meta.num_edges, o.nodes * o.avg_degree * 0.9);
  EXPECT_LE(meta.num_edges, o.nodes * o.avg_degree);
  auto csc = testing::ReadCscFiles(dir / "g/graph/indptr.bin", dir / "g/graph/indices.bin", 4);
  auto labels = ReadArray<int32_t>(dir / "g/labels.bin");
  ASSERT_EQ(labels.size(), o.nodes);
  uint64_t same = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    ASSERT_GE(labels[v], 0);
    ASSERT_LT(labels[v], 5);
    for (uint64_t e = csc.indptr[v]; e < csc.indptr[v + 1]; ++e) {
      ASSERT_NE(csc.indices[e], v) << "self loop";
      same += labels[csc.indices[e]] == labels[v];
    }
  }
  EXPECT_NEAR(static_cast<double>(same) / meta.num_edges, 0.8, 0.02);
  EXPECT_NEAR(static_cast<double>(meta.train_size) / o.nodes, 0.1, 0.01);
  EXPECT_NEAR(static_cast<double>(meta.val_size) / o.nodes, 0.05, 0.01);
  EXPECT_NEAR(static_cast<double>(meta.test_size) / o.nodes, 0.05, 0.01);
  // Power-law degrees: the largest in-degree is far above the mean.
  EXPECT_GT(meta.in_degree.max, 10 * meta.in_degree.mean);
}

// --isolated leaves its share of the nodes without an edge either way, the same ones whatever
// the thread count, and the others keep about the same number of edges.
TEST(Generate, IsolatedNodesHaveNoEdges) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "g");
  o.isolated = 0.1;
  const DatasetMeta meta = GenerateOnOneAndThreeThreads(o, dir / "g", dir / "again");
  auto csc = testing::ReadCscFiles(dir / "g/graph/indptr.bin", dir / "g/graph/indices.bin", 4);
  std::vector<bool> has_in(o.nodes), has_out(o.nodes);
  for (uint64_t v = 0; v < o.nodes; ++v) {
    has_in[v] = csc.indptr[v + 1] > csc.indptr[v];
    for (uint64_t e = csc.indptr[v]; e < csc.indptr[v + 1]; ++e) has_out[csc.indices[e]] = true;
  }
  uint64_t isolated = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    EXPECT_EQ(has_in[v], has_out[v]) << v;  // undirected
    isolated += !has_in[v];
  }
  EXPECT_EQ(isolated, meta.in_degree.zero_count);
  EXPECT_NEAR(static_cast<double>(isolated) / o.nodes, 0.1, 0.01);
  EXPECT_GT(meta.num_edges, o.nodes * o.avg_degree * 0.85);
}

TEST(Generate, FeaturesAreClassCentroidPlusNoise) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "g");
  o.noise = 0.5;
  GenerateDataset(o);
  auto features = ReadArray<float>(dir / "g/features.bin");
  auto labels = ReadArray<int32_t>(dir / "g/labels.bin");
  const uint64_t dim = o.feature_dim, stride = RowStrideBytes(dim, o.feature_dtype) / 4;
  std::vector<double> mean(o.classes * dim, 0), count(o.classes, 0);
  for (uint64_t v = 0; v < o.nodes; ++v) {
    for (uint64_t k = 0; k < dim; ++k) mean[labels[v] * dim + k] += features[v * stride + k];
    count[labels[v]] += 1;
  }
  double noise_var = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    for (uint64_t k = 0; k < dim; ++k) {
      double d = features[v * stride + k] - mean[labels[v] * dim + k] / count[labels[v]];
      noise_var += d * d;
    }
  }
  EXPECT_NEAR(std::sqrt(noise_var / (o.nodes * dim)), 0.5, 0.02);
  // Centroids have norm about 1.
  for (uint32_t c = 0; c < o.classes; ++c) {
    double norm = 0;
    for (uint64_t k = 0; k < dim; ++k) norm += std::pow(mean[c * dim + k] / count[c], 2);
    EXPECT_GT(std::sqrt(norm), 0.3);
    EXPECT_LT(std::sqrt(norm), 2.0);
  }
}

// Binary bag-of-words rows: exactly `ones` ones per row, the same files for any thread count,
// and class-dependent enough that the nearest class-mean row predicts the class well above
// chance while every class shares most of its words.
TEST(Generate, BinaryFeaturesHaveFixedOnesAndClassTopics) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "a");
  o.nodes = 4000;
  o.feature_dim = 120;
  o.binary_ones = 40;
  GenerateOnOneAndThreeThreads(o, dir / "a", dir / "b");

  auto features = ReadArray<float>(dir / "a/features.bin");
  auto labels = ReadArray<int32_t>(dir / "a/labels.bin");
  const uint64_t dim = o.feature_dim, stride = RowStrideBytes(dim, o.feature_dtype) / 4;
  std::vector<double> mean(o.classes * dim, 0), count(o.classes, 0);
  for (uint64_t v = 0; v < o.nodes; ++v) {
    uint64_t ones = 0;
    for (uint64_t k = 0; k < dim; ++k) {
      const float x = features[v * stride + k];
      ASSERT_TRUE(x == 0.0f || x == 1.0f);
      ones += x == 1.0f;
      mean[labels[v] * dim + k] += x;
    }
    ASSERT_EQ(ones, o.binary_ones);
    count[labels[v]] += 1;
  }
  for (uint64_t i = 0; i < mean.size(); ++i) mean[i] /= count[i / dim];
  uint64_t correct = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    double best = -1;
    uint32_t predicted = 0;
    for (uint32_t c = 0; c < o.classes; ++c) {
      double dot = 0;
      for (uint64_t k = 0; k < dim; ++k) dot += features[v * stride + k] * mean[c * dim + k];
      if (dot > best) best = dot, predicted = c;
    }
    correct += predicted == static_cast<uint32_t>(labels[v]);
  }
  const double accuracy = static_cast<double>(correct) / o.nodes;
  EXPECT_GT(accuracy, 2.0 / o.classes);
  EXPECT_LT(accuracy, 1.0);
}

TEST(Generate, RmatAndFloat16AndWideIds) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "r");
  o.graph = GraphModel::kRmat;
  o.feature_dtype = FeatureDtype::kFloat16;
  DatasetMeta narrow = GenerateDataset(o);
  EXPECT_EQ(narrow.row_stride_bytes, 32u);
  EXPECT_GT(narrow.in_degree.max, 20 * narrow.in_degree.mean);
  GenerateOptions w = o;
  w.out = dir / "w";
  w.node_id_bytes = 8;
  DatasetMeta wide = GenerateDataset(w);
  EXPECT_EQ(wide.node_id_bytes, 8u);
  EXPECT_EQ(wide.num_edges, narrow.num_edges);
  auto a = testing::ReadCscFiles(dir / "r/graph/indptr.bin", dir / "r/graph/indices.bin", 4);
  auto b = testing::ReadCscFiles(dir / "w/graph/indptr.bin", dir / "w/graph/indices.bin", 8);
  EXPECT_TRUE(a == b);
}

// --graph hsbm with community offsets: the same files whatever the threads, the labels and
// homophily the profile plants, and features whose community offsets make nodes of one leaf
// community closer than nodes of one class in different communities.
TEST(Generate, HsbmPlantsItsClassesAndCommunities) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions("");
  o.graph = GraphModel::kHsbm;
  o.classes = 8;
  o.homophily = 0.75;
  o.cuts = {0.05, 0.1};
  o.noise = 0.1;
  o.community_offset = 1;
  const DatasetMeta meta = GenerateOnOneAndThreeThreads(o, dir / "h", dir / "h3");
  EXPECT_EQ(meta.num_classes, 8u);
  auto csc = testing::ReadCscFiles(dir / "h/graph/indptr.bin", dir / "h/graph/indices.bin", 4);
  auto labels = ReadArray<int32_t>(dir / "h/labels.bin");
  const HsbmModel model(o.nodes, o.classes, o.class_skew, o.cuts, o.homophily, o.degree_exponent,
                        o.label_noise, o.seed);
  uint64_t same = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    ASSERT_EQ(static_cast<uint32_t>(labels[v]), model.ClassOf(v));
    for (uint64_t e = csc.indptr[v]; e < csc.indptr[v + 1]; ++e) {
      same += labels[csc.indices[e]] == labels[v];
    }
  }
  EXPECT_NEAR(static_cast<double>(same) / meta.num_edges, 0.75, 0.03);
  // Mean squared distance between feature rows: of one finest community against of one class.
  auto rows = ReadArray<float>(dir / "h/features.bin");
  const size_t stride = meta.row_stride_bytes / sizeof(float), finest = 3;
  auto distance = [&](uint64_t a, uint64_t b) {
    double sum = 0;
    for (size_t k = 0; k < o.feature_dim; ++k) {
      const double diff = rows[a * stride + k] - rows[b * stride + k];
      sum += diff * diff;
    }
    return sum;
  };
  double in_community = 0, in_class = 0;
  int community_pairs = 0, class_pairs = 0;
  for (uint64_t a = 0; a < 2000; ++a) {
    for (uint64_t b = a + 1; b < 2000; ++b) {
      if (model.CommunityOf(a, finest) == model.CommunityOf(b, finest)) {
        in_community += distance(a, b);
        ++community_pairs;
      } else if (labels[a] == labels[b]) {
        in_class += distance(a, b);
        ++class_pairs;
      }
    }
  }
  ASSERT_GT(community_pairs, 0);
  ASSERT_GT(class_pairs, 0);
  EXPECT_LT(in_community / community_pairs, 0.5 * in_class / class_pairs);
}

// --class-skew: the classes hold the shares (k + 1)^-1 asks, and the homophily aimed at is met
// where equal classes, each inside one block at 4 parts, could not reach it past the cuts.
TEST(Generate, HsbmSkewedClassesHoldTheirSharesAndReachTheHomophily) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "h");
  o.graph = GraphModel::kHsbm;
  o.classes = 4;
  o.class_skew = 1;
  o.homophily = 0.7;
  o.cuts = {0.2, 0.35};
  const DatasetMeta meta = GenerateDataset(o);
  auto csc = testing::ReadCscFiles(dir / "h/graph/indptr.bin", dir / "h/graph/indices.bin", 4);
  auto labels = ReadArray<int32_t>(dir / "h/labels.bin");
  std::vector<uint64_t> sizes(o.classes, 0);
  uint64_t same = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    ++sizes[labels[v]];
    for (uint64_t e = csc.indptr[v]; e < csc.indptr[v + 1]; ++e) {
      same += labels[csc.indices[e]] == labels[v];
    }
  }
  // Blocks 8, 4, 3 and 1 of 16 (LayOutHsbmClasses).
  const double blocks[] = {8, 4, 3, 1};
  for (uint32_t k = 0; k < o.classes; ++k) {
    EXPECT_NEAR(static_cast<double>(sizes[k]) / o.nodes, blocks[k] / 16, 0.002) << k;
  }
  EXPECT_NEAR(static_cast<double>(same) / meta.num_edges, 0.7, 0.03);
  const HsbmModel equal(o.nodes, o.classes, 0, o.cuts, o.homophily, o.degree_exponent, 0, o.seed);
  double reachable = 0;
  for (int d = 0; d <= equal.levels(); ++d) {
    reachable += equal.depth_shares()[d] * equal.same_class()[d];
  }
  EXPECT_LT(reachable, 0.7) << reachable;
}

// --label-noise: exactly the nodes of the model's periphery get a label drawn at random, the
// periphery is sparsely linked, and the labels' homophily is still the one aimed at.
TEST(Generate, HsbmLabelNoiseRelabelsThePeripheryAndKeepsTheHomophily) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "h");
  o.graph = GraphModel::kHsbm;
  o.classes = 8;
  o.homophily = 0.6;
  o.cuts = {0.05, 0.1};
  o.label_noise = 0.25;
  const DatasetMeta meta = GenerateDataset(o);
  auto csc = testing::ReadCscFiles(dir / "h/graph/indptr.bin", dir / "h/graph/indices.bin", 4);
  auto labels = ReadArray<int32_t>(dir / "h/labels.bin");
  const HsbmModel model(o.nodes, o.classes, o.class_skew, o.cuts, o.homophily, o.degree_exponent,
                        o.label_noise, o.seed);
  uint64_t same = 0, periphery = 0, relabelled = 0, periphery_ends = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    const uint64_t degree = csc.indptr[v + 1] - csc.indptr[v];
    if (model.InPeriphery(v)) {
      ++periphery;
      relabelled += static_cast<uint32_t>(labels[v]) != model.ClassOf(v);
      periphery_ends += degree;
    } else {
      ASSERT_EQ(static_cast<uint32_t>(labels[v]), model.ClassOf(v));
    }
    for (uint64_t e = csc.indptr[v]; e < csc.indptr[v + 1]; ++e) {
      same += labels[csc.indices[e]] == labels[v];
    }
  }
  EXPECT_NEAR(static_cast<double>(periphery) / o.nodes, 0.25, 0.01);
  // A random label is another class 7 times in 8.
  EXPECT_NEAR(static_cast<double>(relabelled) / periphery, 7.0 / 8, 0.02);
  // A quarter of the nodes, drawn at a fifth of their small weight: a few hundredths of the ends.
  EXPECT_LT(static_cast<double>(periphery_ends) / meta.num_edges, 0.05);
  EXPECT_NEAR(static_cast<double>(same) / meta.num_edges, 0.6, 0.03);
}

// --feature-density: CSR rows of exactly round(density × dim) distinct ascending words, the
// format's files and meta, the same files whatever the threads, and rows that tell the classes
// apart; the dense-row readers refuse them in one line.
TEST(Generate, SparseFeaturesAreCsrBagsOfWords) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "a");
  o.nodes = 3000;
  o.feature_dim = 2000;
  o.feature_density = 0.01;
  const DatasetMeta meta = GenerateOnOneAndThreeThreads(o, dir / "a", dir / "b");
  EXPECT_TRUE(meta.sparse_features);
  EXPECT_EQ(meta.minor_version, 2);
  EXPECT_EQ(meta.feature_nnz, o.nodes * 20);
  EXPECT_FALSE(meta.files.contains("features.bin"));
  const Dataset dataset = Dataset::Open(dir / "a");
  testing::VerifyDataset(dataset);

  const auto indptr = ReadArray<uint64_t>(dir / "a/features/indptr.bin");
  const auto columns = ReadArray<uint32_t>(dir / "a/features/indices.bin");
  const auto values = ReadArray<float>(dir / "a/features/values.bin");
  const auto labels = ReadArray<int32_t>(dir / "a/labels.bin");
  ASSERT_EQ(indptr.size(), o.nodes + 1);
  ASSERT_EQ(columns.size(), meta.feature_nnz);
  std::vector<std::vector<double>> mean(o.classes, std::vector<double>(o.feature_dim, 0));
  for (uint64_t v = 0; v < o.nodes; ++v) {
    ASSERT_EQ(indptr[v + 1] - indptr[v], 20u);
    for (uint64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
      ASSERT_LT(columns[k], o.feature_dim);
      if (k > indptr[v]) {
        ASSERT_LT(columns[k - 1], columns[k]);
      }
      ASSERT_EQ(values[k], 1.0f);
      mean[labels[v]][columns[k]] += 1;
    }
  }
  // The nearest class mean (by shared words) beats chance by far.
  uint64_t correct = 0;
  for (uint64_t v = 0; v < o.nodes; ++v) {
    double best = -1;
    int32_t predicted = 0;
    for (uint32_t c = 0; c < o.classes; ++c) {
      double dot = 0;
      for (uint64_t k = indptr[v]; k < indptr[v + 1]; ++k) dot += mean[c][columns[k]];
      if (dot > best) best = dot, predicted = static_cast<int32_t>(c);
    }
    correct += predicted == labels[v];
  }
  EXPECT_GT(static_cast<double>(correct) / o.nodes, 2.0 / o.classes);

  MemoryBudget budget(uint64_t{64} << 20);
  try {
    OpenFeatureStore(dataset, FeatureStoreKind::kMemory, {}, budget);
    FAIL() << "a feature store opened CSR features";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has sparse (CSR) features"), std::string::npos);
  }
}

TEST(Generate, RefusesBadOptions) {
  testing::ScratchDir dir;
  GenerateOptions o = SmallOptions(dir / "x");
  o.homophily = 1.5;
  EXPECT_THROW(GenerateDataset(o), Error);
  o = SmallOptions(dir / "x");
  o.classes = 0;
  EXPECT_THROW(GenerateDataset(o), Error);
  o = SmallOptions(dir / "x");
  o.binary_ones = o.feature_dim + 1;
  EXPECT_THROW(GenerateDataset(o), Error);
  o = SmallOptions(dir / "x");
  o.feature_density = 0.5;
  EXPECT_THROW(GenerateDataset(o), Error);
  o.feature_density = 0.01;  // no word of 16
  EXPECT_THROW(GenerateDataset(o), Error);
  o = SmallOptions(dir / "x");
  o.isolated = 0.6;
  EXPECT_THROW(GenerateDataset(o), Error);
  o = SmallOptions(dir / "x");
  o.label_noise = 0.1;  // an SBM has no periphery
  EXPECT_THROW(GenerateDataset(o), Error);
  o.graph = GraphModel::kHsbm;
  o.label_noise = 1;
  EXPECT_THROW(GenerateDataset(o), Error);
  EXPECT_TRUE(testing::ListDirectory(dir.path()).empty());
}

TEST(NodePermutation, IsABijectionBothWays) {
  for (uint64_t n : {2ull, 3ull, 17ull, 1000ull, 65537ull}) {
    NodePermutation p(n, 9);
    std::vector<bool> seen(n, false);
    for (uint64_t x = 0; x < n; ++x) {
      uint64_t y = p.Forward(x);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]);
      seen[y] = true;
      ASSERT_EQ(p.Inverse(y), x);
    }
  }
}

}  // namespace
}  // namespace strata
