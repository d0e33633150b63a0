#include "strata/generate.h"

#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <memory>
#include <vector>

#include "common/enum_names.h"
#include "common/interrupt.h"
#include "common/parallel.h"
#include "common/progress.h"
#include "common/random.h"
#include "dataset/binary_features.h"
#include "dataset/build_common.h"
#include "dataset/csc_builder.h"
#include "dataset/dataset_writer.h"
#include "dataset/feature_writer.h"
#include "dataset/graph_models.h"
#include "dataset/hsbm_model.h"
#include "dataset/sparse_feature_writer.h"
#include "dataset/sparse_features.h"
#include "storage/file.h"
#include "strata/error.h"
#include "strata/memory_budget.h"

namespace strata {
namespace {

constexpr EnumNames<GraphModel, 3> kGraphModelNames("graph model", {{{GraphModel::kSbm, "sbm"},
                                                                     {GraphModel::kRmat, "rmat"},
                                                                     {GraphModel::kHsbm, "hsbm"}}});

constexpr uint64_t kPairsPerBlock = uint64_t{1} << 18;
constexpr uint64_t kRowsPerChunk = 2048;
// Stream tags, so that edges, centroids, noise and splits draw independent numbers.
constexpr uint64_t kCentroidStream = 0xC3;
constexpr uint64_t kFeatureStream = 0xFEA7;
constexpr uint64_t kSplitStream = 0x5917;
constexpr uint64_t kVocabularyStream = 0xB0C4;
constexpr uint64_t kIsolatedStream = 0x1501;
constexpr uint64_t kCommunityStream = 0xC033;
constexpr uint64_t kLabelNoiseStream = 0x1AB3;
// Pairs drawn in a row that all touched an isolated node before the options count as unable
// to connect anything (a few non-isolated nodes, none of them in reach of each other).
constexpr int kMaxPairRedraws = 10000;

// Words per row of --feature-density.
uint64_t SparseOnes(const GenerateOptions& o) {
  return static_cast<uint64_t>(
      std::llround(o.feature_density * static_cast<double>(o.feature_dim)));
}

void Validate(const GenerateOptions& o) {
  auto bad = [](const std::string& what) { return Error::Input(what); };
  if (o.nodes < 2 || o.nodes > kMaxNodeIds) throw bad("--nodes must be in [2, 2^48]");
  if (o.classes < 1) throw bad("--classes must be at least 1");
  if (o.classes > o.nodes) throw bad("--classes must not exceed --nodes");
  if (!(o.avg_degree >= 0) || o.avg_degree > 1e6) throw bad("--avg-degree must be in [0, 1e6]");
  if (!(o.homophily >= 0 && o.homophily <= 1)) throw bad("--homophily must be in [0, 1]");
  if (!(o.degree_exponent > 2 && o.degree_exponent <= 10)) {
    throw bad("--degree-exponent must be in (2, 10]");
  }
  if (!(o.isolated >= 0 && o.isolated <= 0.5)) throw bad("--isolated must be in [0, 0.5]");
  if (o.graph == GraphModel::kHsbm) {
    if (!(o.class_skew >= 0 && o.class_skew <= 4)) throw bad("--class-skew must be in [0, 4]");
    const int class_depth = LayOutHsbmClasses(o.classes, o.class_skew).depth;
    // The layout stops at depth 62, beyond any node count.
    if (o.classes > o.nodes / 2 + 1 || (uint64_t{1} << class_depth) > o.nodes) {
      throw bad("--graph hsbm needs at least " + std::to_string(uint64_t{1} << class_depth) +
                " nodes to give every class a block (--classes, --class-skew)");
    }
    for (size_t j = 0; j < o.cuts.size(); ++j) {
      if (!(o.cuts[j] >= (j > 0 ? o.cuts[j - 1] : 0) && o.cuts[j] < 1)) {
        throw bad("--cuts must rise from 0 and stay below 1");
      }
    }
  }
  if (o.class_skew != 0 && o.graph != GraphModel::kHsbm) {
    throw bad("--class-skew needs --graph hsbm");
  }
  if (!(o.label_noise >= 0 && o.label_noise < 1)) throw bad("--label-noise must be in [0, 1)");
  if (o.label_noise > 0 && o.graph != GraphModel::kHsbm) {
    throw bad("--label-noise needs --graph hsbm");
  }
  if (!(o.noise >= 0) || !std::isfinite(o.noise)) throw bad("--noise must be >= 0");
  if (!(o.community_offset >= 0) || !std::isfinite(o.community_offset)) {
    throw bad("--community-offset must be >= 0");
  }
  if (o.binary_ones > o.feature_dim) {
    throw bad("--binary-features must not exceed --feature-dim");
  }
  if (o.binary_ones > 0 && o.noise == 0) throw bad("--binary-features needs --noise > 0");
  if (o.feature_density != 0) {
    if (!(o.feature_density > 0 && o.feature_density <= 0.125)) {
      throw bad("--feature-density must be in (0, 0.125]");
    }
    if (o.binary_ones > 0) throw bad("--feature-density and --binary-features exclude each other");
    if (SparseOnes(o) == 0) throw bad("--feature-density sets no word of --feature-dim");
  }
  double sum = o.train_ratio + o.val_ratio + o.test_ratio;
  if (o.train_ratio < 0 || o.val_ratio < 0 || o.test_ratio < 0 || sum > 1 + 1e-9) {
    throw bad("split ratios must be >= 0 and sum to at most 1");
  }
  if (o.node_id_bytes != 0 && o.node_id_bytes != 4 && o.node_id_bytes != 8) {
    throw bad("--node-id-bytes must be 4 or 8");
  }
  if (o.node_id_bytes == 4 && NodeIdBytesFor(o.nodes) == 8) {
    throw bad("more than 2^32 nodes need 8-byte node ids");
  }
}

// Whether `node` is one of the share o.isolated of nodes without edges.
bool IsIsolated(const GenerateOptions& o, uint64_t node) {
  if (o.isolated == 0) return false;
  const uint64_t state = MixSeed(o.seed ^ kIsolatedStream, node);
  return static_cast<double>(state >> 11) * 0x1.0p-53 < o.isolated;
}

// The model's next pair that touches no isolated node.
template <typename Model>
void SampleConnectedPair(const Model& model, const GenerateOptions& o, Rng& rng, uint64_t& u,
                         uint64_t& v) {
  for (int attempt = 0; attempt < kMaxPairRedraws; ++attempt) {
    model.SamplePair(rng, u, v);
    if (!IsIsolated(o, u) && !IsIsolated(o, v)) return;
  }
  throw Error::Input(fmt::format(
      "--isolated {} leaves too few connectable nodes to draw edges from; lower it", o.isolated));
}

template <typename Model>
void GenerateEdges(const Model& model, const GenerateOptions& o, unsigned threads,
                   MemoryBudget& budget, CscBuilder& builder, ProgressBar* progress) {
  const uint64_t pairs = static_cast<uint64_t>(std::llround(o.nodes * o.avg_degree / 2));
  const uint64_t blocks = (pairs + kPairsPerBlock - 1) / kPairsPerBlock;
  // Each block holds both directions of its pairs.
  ChargedArray<uint64_t> src(budget, threads * 2 * kPairsPerBlock, "generated edge blocks");
  ChargedArray<uint64_t> dst(budget, threads * 2 * kPairsPerBlock, "generated edge blocks");
  if (progress) progress->Restart("generating edges", pairs);
  for (uint64_t first = 0; first < blocks; first += threads) {
    uint64_t round = std::min<uint64_t>(threads, blocks - first);
    ParallelFor(threads, round, [&](uint64_t begin, uint64_t end) {
      for (uint64_t i = begin; i < end; ++i) {
        uint64_t block = first + i;
        uint64_t count = std::min(kPairsPerBlock, pairs - block * kPairsPerBlock);
        Rng rng(MixSeed(o.seed, block));
        uint64_t* s = src.data() + i * 2 * kPairsPerBlock;
        uint64_t* d = dst.data() + i * 2 * kPairsPerBlock;
        for (uint64_t k = 0; k < count; ++k) {
          uint64_t u, v;
          SampleConnectedPair(model, o, rng, u, v);
          s[2 * k] = u;
          d[2 * k] = v;
          s[2 * k + 1] = v;
          d[2 * k + 1] = u;
        }
      }
    });
    for (uint64_t i = 0; i < round; ++i) {
      uint64_t block = first + i;
      uint64_t count = 2 * std::min(kPairsPerBlock, pairs - block * kPairsPerBlock);
      builder.Add({src.data() + i * 2 * kPairsPerBlock, count},
                  {dst.data() + i * 2 * kPairsPerBlock, count});
    }
    ThrowIfInterrupted();
    if (progress) progress->Update(std::min(pairs, (first + round) * kPairsPerBlock));
  }
}

// Writes features (class centroid + Gaussian noise, binary words, or sparse words as CSR),
// labels and splits in one pass over the nodes, each node's numbers drawn from its own stream.
// What the feature model holds for --feature-dim `dim` (in double: a huge dim must not wrap):
// the class centroids, the word models' tables (classes x dim weights with their construction
// scratch and a row's scratch per thread, or a CDF and two permutations over the words) and the
// writer's row.
double FeatureModelBytes(const GenerateOptions& o, unsigned threads) {
  const double dim = static_cast<double>(o.feature_dim), classes = o.classes;
  double bytes =
      classes * dim * 4 + static_cast<double>(RowStrideBytes(o.feature_dim, o.feature_dtype));
  if (o.binary_ones > 0) bytes += classes * dim * 4 + dim * 20 + threads * dim * 8;
  if (o.feature_density > 0) bytes += dim * 16;
  return bytes;
}

template <typename Model>
void GenerateNodes(const Model& model, const GenerateOptions& o, unsigned threads,
                   MemoryBudget& budget, DatasetWriter& writer, ProgressBar* progress) {
  const uint64_t dim = o.feature_dim;
  // Charged before anything of the feature dimension's size is allocated, so that a dimension
  // the budget cannot hold is refused at once rather than by the allocator.
  TrackedCharge model_charge(budget, "the feature model");
  model_charge.Update(static_cast<uint64_t>(std::min(FeatureModelBytes(o, threads), 0x1p62)));
  std::vector<float> centroids(static_cast<size_t>(o.classes) * dim);
  Rng centroid_rng(MixSeed(o.seed, kCentroidStream));
  const double centroid_scale = dim == 0 ? 0 : 1.0 / std::sqrt(static_cast<double>(dim));
  for (float& x : centroids) x = static_cast<float>(centroid_rng.Normal() * centroid_scale);
  // A model with nested communities adds each level's offset to its dense rows.
  std::vector<ChargedArray<float>> offsets;
  if constexpr (requires { model.CommunityCounts(); }) {
    if (o.community_offset > 0 && o.binary_ones == 0 && o.feature_density == 0) {
      const std::vector<uint64_t> counts = model.CommunityCounts();
      for (size_t level = 0; level < counts.size(); ++level) {
        offsets.emplace_back(budget, counts[level] * dim, "community offsets");
        Rng rng(MixSeed(o.seed ^ kCommunityStream, level));
        float* values = offsets.back().data();
        for (uint64_t i = 0; i < counts[level] * dim; ++i) {
          values[i] = static_cast<float>(rng.Normal() * o.community_offset * centroid_scale);
        }
      }
    }
  }
  std::unique_ptr<BinaryFeatureModel> words;
  if (o.binary_ones > 0) {
    words = std::make_unique<BinaryFeatureModel>(dim, o.classes, o.binary_ones, 1 + 1 / o.noise,
                                                 MixSeed(o.seed, kVocabularyStream));
  }
  const bool sparse = o.feature_density > 0;
  std::unique_ptr<SparseFeatureModel> sparse_words;
  if (sparse) {
    sparse_words = std::make_unique<SparseFeatureModel>(
        dim, o.classes, SparseOnes(o), 1 / (1 + o.noise), MixSeed(o.seed, kVocabularyStream));
  }

  // No more rows than the graph has: a few very wide rows need no full chunk.
  const uint64_t chunk_rows =
      std::min<uint64_t>(kRowsPerChunk * threads, std::max<uint64_t>(o.nodes, 1));
  // Dense rows, or each row's sparse words.
  ChargedArray<float> rows(budget, sparse ? 1 : chunk_rows * std::max<uint64_t>(dim, 1),
                           "feature rows");
  std::vector<std::vector<uint32_t>> row_words(sparse ? chunk_rows : 0);
  TrackedCharge words_charge(budget, "feature rows");
  words_charge.Update(sparse ? chunk_rows * SparseOnes(o) * 2 * sizeof(uint32_t) : 0);
  const std::vector<float> ones(sparse ? SparseOnes(o) : 0, 1.0f);
  std::vector<int32_t> labels(chunk_rows);
  std::vector<uint8_t> split(chunk_rows);

  std::unique_ptr<FeatureWriter> features;
  std::unique_ptr<SparseFeatureWriter> sparse_features;
  if (sparse) {
    sparse_features = std::make_unique<SparseFeatureWriter>(
        writer.PathOf(kSparseIndptrFile), writer.PathOf(kSparseIndicesFile),
        writer.PathOf(kSparseValuesFile), writer.PathOf(kSparseValuesFile));
  } else {
    features = std::make_unique<FeatureWriter>(writer.PathOf(kFeaturesFile), dim, o.feature_dtype,
                                               writer.PathOf(kFeaturesFile), budget);
  }
  FileWriter label_file(writer.PathOf(kLabelsFile));
  FileWriter train(writer.PathOf(SplitFile(Split::kTrain))),
      val(writer.PathOf(SplitFile(Split::kVal))), test(writer.PathOf(SplitFile(Split::kTest)));
  FileWriter* split_files[3] = {&train, &val, &test};
  uint64_t split_sizes[3] = {0, 0, 0};
  const uint32_t id_bytes = writer.meta().node_id_bytes;
  const double cut_train = o.train_ratio, cut_val = o.train_ratio + o.val_ratio,
               cut_test = cut_val + o.test_ratio;

  if (progress) progress->Restart("generating features", o.nodes);
  for (uint64_t first = 0; first < o.nodes; first += chunk_rows) {
    uint64_t count = std::min(chunk_rows, o.nodes - first);
    ParallelFor(threads, count, [&](uint64_t begin, uint64_t end) {
      BinaryFeatureModel::Scratch scratch;
      for (uint64_t i = begin; i < end; ++i) {
        uint64_t node = first + i;
        uint32_t cls = model.ClassOf(node);
        labels[i] = static_cast<int32_t>(cls);
        if constexpr (requires { model.InPeriphery(node); }) {
          if (model.InPeriphery(node)) {
            labels[i] = static_cast<int32_t>(
                Rng(MixSeed(o.seed ^ kLabelNoiseStream, node)).Below(o.classes));
          }
        }
        Rng rng(MixSeed(o.seed ^ kFeatureStream, node));
        float* row = rows.data() + i * dim;
        if (sparse) {
          sparse_words->DrawRow(cls, rng, row_words[i]);
        } else if (words) {
          words->FillRow(cls, rng, {row, dim}, scratch);
        } else {
          const float* centroid = centroids.data() + cls * dim;
          for (uint64_t k = 0; k < dim; ++k) {
            row[k] = centroid[k] + static_cast<float>(o.noise * rng.Normal());
          }
          if constexpr (requires { model.CommunityOf(node, 0); }) {
            for (size_t level = 0; level < offsets.size(); ++level) {
              const float* offset = offsets[level].data() + model.CommunityOf(node, level) * dim;
              for (uint64_t k = 0; k < dim; ++k) row[k] += offset[k];
            }
          }
        }
        uint64_t state = MixSeed(o.seed ^ kSplitStream, node);
        double u = static_cast<double>(state >> 11) * 0x1.0p-53;
        split[i] = u < cut_train ? 0 : u < cut_val ? 1 : u < cut_test ? 2 : 3;
      }
    });
    if (sparse) {
      for (uint64_t i = 0; i < count; ++i) {
        sparse_features->AppendRow(row_words[i], {ones.data(), row_words[i].size()});
      }
    } else {
      features->AppendRows({rows.data(), count * dim});
    }
    label_file.Append(labels.data(), count * sizeof(int32_t));
    for (uint64_t i = 0; i < count; ++i) {
      if (split[i] < 3) {
        AppendNodeId(*split_files[split[i]], first + i, id_bytes);
        ++split_sizes[split[i]];
      }
    }
    ThrowIfInterrupted();
    if (progress) progress->Update(first + count);
  }
  DatasetMeta& meta = writer.meta();
  if (sparse) {
    const SparseFeatureDigests digests = sparse_features->Finish();
    writer.Record(kSparseIndptrFile, digests.indptr);
    writer.Record(kSparseIndicesFile, digests.indices);
    writer.Record(kSparseValuesFile, digests.values);
    meta.sparse_features = true;
    meta.feature_nnz = sparse_features->nnz();
    meta.minor_version = std::max(meta.minor_version, 2);
  } else {
    writer.Record(kFeaturesFile, features->Finish());
  }
  writer.Record(kLabelsFile, label_file.Finish());
  writer.Record(SplitFile(Split::kTrain), train.Finish());
  writer.Record(SplitFile(Split::kVal), val.Finish());
  writer.Record(SplitFile(Split::kTest), test.Finish());
  meta.feature_dim = dim;
  meta.feature_dtype = o.feature_dtype;
  meta.row_stride_bytes = RowStrideBytes(dim, o.feature_dtype);
  meta.num_classes = o.classes;
  meta.train_size = split_sizes[0];
  meta.val_size = split_sizes[1];
  meta.test_size = split_sizes[2];
}

template <typename Model>
DatasetMeta Generate(const Model& model, const GenerateOptions& o) {
  MemoryBudget budget(o.memory_budget_bytes);
  unsigned threads = o.threads ? o.threads : DefaultThreads();
  std::unique_ptr<ProgressBar> progress;
  if (o.progress) progress = std::make_unique<ProgressBar>("generating", 0);

  DatasetWriter writer(o.out, o.replace_existing);
  // The features and indptr are sized by the options alone: a disk without room for them is
  // refused before the edges are drawn.
  if (o.feature_density == 0) {
    CheckFreeSpace(ParentDirectory(writer.PathOf(kLabelsFile)),
                   o.nodes * (RowStrideBytes(o.feature_dim, o.feature_dtype) + sizeof(uint64_t)),
                   fmt::format("features.bin and graph/indptr.bin of {} nodes", o.nodes));
  }
  const uint32_t id_bytes = o.node_id_bytes ? o.node_id_bytes : NodeIdBytesFor(o.nodes);
  // Forced 8-byte ids also force 128-bit sort keys, so small tests cover the wide path.
  const uint32_t id_bits = o.node_id_bytes == 8 ? 64 : IdBitsFor(o.nodes);
  {
    const uint64_t block_bytes = 2 * threads * 2 * kPairsPerBlock * sizeof(uint64_t);
    CscBuilder builder(budget, CscBufferBytes(budget, block_bytes + (uint64_t{16} << 20)),
                       writer.spill_dir(), id_bits, /*deduplicate=*/true);
    GenerateEdges(model, o, threads, budget, builder, progress.get());
    WriteGraph(builder, o.nodes, id_bytes, /*add_self_loops=*/false, writer, progress.get());
  }
  GenerateNodes(model, o, threads, budget, writer, progress.get());
  writer.Publish();
  return writer.meta();
}

}  // namespace

GraphModel ParseGraphModel(std::string_view name) { return kGraphModelNames.Parse(name); }
std::string_view GraphModelName(GraphModel model) { return kGraphModelNames.Name(model); }

DatasetMeta GenerateDataset(const GenerateOptions& options) {
  Validate(options);
  if (options.graph == GraphModel::kRmat) {
    return Generate(RmatModel(options.nodes, options.classes, options.seed), options);
  }
  if (options.graph == GraphModel::kHsbm) {
    return Generate(
        HsbmModel(options.nodes, options.classes, options.class_skew, options.cuts,
                  options.homophily, options.degree_exponent, options.label_noise, options.seed),
        options);
  }
  return Generate(SbmModel(options.nodes, options.classes, options.homophily,
                           options.degree_exponent, options.seed),
                  options);
}

}  // namespace strata
