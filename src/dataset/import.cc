#include "strata/import.h"

#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "common/interrupt.h"
#include "common/progress.h"
#include "dataset/build_common.h"
#include "dataset/csc_builder.h"
#include "dataset/dataset_writer.h"
#include "dataset/edge_list_reader.h"
#include "dataset/import_common.h"
#include "dataset/node_data_import.h"
#include "dataset/npz_features.h"
#include "storage/zip_archive.h"
#include "strata/error.h"
#include "strata/memory_budget.h"
#include "strata/npy.h"

namespace strata {
namespace {

// Node ids must number the nodes 0..N-1. Edges name at most two nodes each, so an edge list that
// alone gives the node count with ids far beyond that (hashed or global ids, or one bad id) would
// build an indptr mostly of nodes no edge names: refused before anything that large is written.
void CheckIdsAreDense(uint64_t num_nodes, uint64_t edges, const std::string& path) {
  constexpr uint64_t kAlwaysPlausible = uint64_t{1} << 24;
  if (num_nodes <= kAlwaysPlausible || num_nodes / 32 <= edges) return;
  throw Error::Input(
      fmt::format("the largest node id, {}, is far beyond what {} edges can name: node ids must "
                  "number the nodes 0..N-1 (renumber them), or give --features or --labels, "
                  "whose rows set the number of nodes",
                  num_nodes - 1, edges),
      path);
}

std::optional<NpyReader> OpenIfExists(const std::string& path) {
  if (!std::filesystem::exists(path)) return std::nullopt;
  return NpyReader(path);
}

// The arrays of an --npy import by name ("edge_index", "labels", ...): DIR/NAME.npy, or the
// member NAME.npy of an .npz archive (numpy.savez), extracted into the writer's spill directory
// when opened and named "ARCHIVE:NAME.npy" in errors.
class NpyArrays {
 public:
  // Throws an input error naming `source` when it is neither a directory nor an .npz.
  static void CheckSource(const std::string& source) {
    if (std::filesystem::is_directory(source)) return;
    if (!std::filesystem::is_regular_file(source) || !HasZipMagic(source)) {
      throw Error::Input("--npy expects a directory of .npy files or an .npz archive of them",
                         source);
    }
  }

  // `source` has passed CheckSource (or is a directory).
  NpyArrays(const std::string& source, const DatasetWriter& writer)
      : source_(source), spill_dir_(writer.spill_dir()) {
    if (!std::filesystem::is_directory(source)) archive_.emplace(source);
  }

  bool archive() const { return archive_.has_value(); }
  std::string PathOf(std::string_view name) const {
    return fmt::format("{}/{}.npy", source_, name);
  }

  std::optional<NpyReader> Open(std::string_view name) const {
    if (!archive_) return OpenIfExists(PathOf(name));
    const std::string file = fmt::format("{}.npy", name);
    const ZipMember* member = archive_->Find(file);
    if (member == nullptr) return std::nullopt;
    return ExtractNpyMember(*archive_, *member, spill_dir_ + "/npy-" + file);
  }

  NpyReader Require(std::string_view name) const {
    if (!archive_) return NpyReader(PathOf(name));
    std::optional<NpyReader> reader = Open(name);
    if (!reader) throw Error::Input(fmt::format("has no member {}.npy", name), source_);
    return std::move(*reader);
  }

 private:
  std::string source_;
  std::string spill_dir_;
  std::optional<ZipArchive> archive_;
};

// Splits named like the .npy layout, {train,val,test}_idx.npy, each optional; `arrays` null
// when there is no split at all.
void ImportSplits(const NpyArrays* arrays, bool require_one, const std::string& where,
                  uint64_t num_nodes, MemoryBudget& budget, DatasetWriter& writer) {
  bool any = false;
  NodeBits seen(num_nodes, budget);
  for (Split split : kAllSplits) {
    std::optional<NpyReader> ids;
    if (arrays) ids = arrays->Open(fmt::format("{}_idx", SplitName(split)));
    any |= ids.has_value();
    if (ids) CheckSplitShape(*ids);
    const std::optional<IntColumn> column = ids ? std::optional(NpyColumn(*ids)) : std::nullopt;
    ImportSplit(split, column ? &*column : nullptr, seen, writer);
  }
  if (require_one && !any) {
    throw Error::Input("no train_idx.npy, val_idx.npy or test_idx.npy found", where);
  }
}

// The features of an import: a dense [N, D] .npy, or a SciPy sparse matrix in an .npz.
struct FeatureInput {
  std::optional<NpyReader> dense;
  std::optional<NpzFeatures> sparse;

  uint64_t rows() const { return sparse ? sparse->rows() : dense->header().shape[0]; }
};

// An .npz is a ZIP archive: told by its name, or by the magic whatever its name.
FeatureInput OpenFeatures(const std::string& path, const ImportOptions& o,
                          const DatasetWriter& writer) {
  FeatureInput input;
  if (!path.ends_with(".npz") && !HasZipMagic(path)) {
    input.dense.emplace(path);
    CheckFeatureShape(*input.dense);
    return input;
  }
  if (o.feature_dtype != FeatureDtype::kFloat32) {
    throw Error::Input(
        "sparse features are stored as float32: --feature-dtype float16 is for dense .npy "
        "features only",
        path);
  }
  input.sparse.emplace(path, writer.spill_dir());
  return input;
}

void WriteFeatures(const FeatureInput& input, FeatureDtype dtype, MemoryBudget& budget,
                   DatasetWriter& writer) {
  if (input.sparse) {
    input.sparse->Import(budget, writer);
  } else {
    ImportFeatures(*input.dense, dtype, budget, writer);
  }
}

// Thrown inside an edge-list import that assumed ids below 2^32 and met a larger one.
struct NeedsWideIds {};

}  // namespace

DatasetMeta ImportNpyDirectory(const std::string& npy_dir, const ImportOptions& o) {
  CheckImportOptions(o);
  NpyArrays::CheckSource(npy_dir);
  MemoryBudget budget(o.memory_budget_bytes);
  // Made before the inputs are opened: an .npz is extracted into its staging directory.
  DatasetWriter writer(o.out, o.replace_existing, {npy_dir});
  const NpyArrays arrays(npy_dir, writer);
  NpyReader edges = arrays.Require("edge_index");
  FeatureInput features;
  if (arrays.archive()) {
    features.dense.emplace(arrays.Require("features"));
    CheckFeatureShape(*features.dense);
  } else {
    // A sparse features.npz stands in for an absent features.npy.
    std::string features_path = npy_dir + "/features.npy";
    if (!std::filesystem::exists(features_path) &&
        std::filesystem::exists(npy_dir + "/features.npz")) {
      features_path = npy_dir + "/features.npz";
    }
    features = OpenFeatures(features_path, o, writer);
  }
  const uint64_t num_nodes = features.rows();
  std::optional<NpyReader> labels = arrays.Open("labels");
  if (labels) CheckLabelShape(*labels, num_nodes);

  auto progress = MakeImportProgress(o);
  const uint32_t id_bytes = ImportNodeIdBytes(o, num_nodes);
  writer.meta().node_id_bytes = id_bytes;
  {
    CscBuilder builder(budget, CscBufferBytes(budget, kBuilderReserveBytes), writer.spill_dir(),
                       id_bytes == 8 ? 64 : IdBitsFor(num_nodes), !o.keep_parallel_edges);
    ReadEdgeIndex(edges, num_nodes, o.undirected, budget, builder, progress.get());
    WriteGraph(builder, num_nodes, id_bytes, o.self_loops, writer, progress.get());
  }
  if (progress) progress->Restart("writing features", 0);
  WriteFeatures(features, o.feature_dtype, budget, writer);
  if (labels) {
    ImportLabels(NpyColumn(*labels), num_nodes, writer);
  } else {
    WriteNoLabels(num_nodes, writer);
  }
  ImportSplits(&arrays, /*require_one=*/false, npy_dir, num_nodes, budget, writer);
  writer.Publish();
  return writer.meta();
}

DatasetMeta ImportEdgeList(const EdgeListSources& sources, const ImportOptions& o) {
  CheckImportOptions(o);
  MemoryBudget budget(o.memory_budget_bytes);
  // Made before the inputs are opened: an .npz is extracted into its staging directory.
  DatasetWriter writer(o.out, o.replace_existing,
                       {sources.edge_list, sources.features, sources.labels, sources.split_dir});
  std::optional<FeatureInput> features;
  std::optional<NpyReader> labels;
  std::optional<uint64_t> known_nodes;  // from the node data; else from the largest id
  if (!sources.features.empty()) {
    features = OpenFeatures(sources.features, o, writer);
    known_nodes = features->rows();
  }
  if (!sources.labels.empty()) {
    labels.emplace(sources.labels);
    if (!known_nodes) known_nodes = labels->header().shape.empty() ? 0 : labels->header().shape[0];
    CheckLabelShape(*labels, *known_nodes);
  }
  if (!sources.split_dir.empty() && !std::filesystem::is_directory(sources.split_dir)) {
    throw Error::Input("--split expects a directory with train_idx.npy, val_idx.npy, test_idx.npy",
                       sources.split_dir);
  }
  std::optional<NpyArrays> split;
  if (!sources.split_dir.empty()) split.emplace(sources.split_dir, writer);

  auto progress = MakeImportProgress(o);
  uint64_t num_nodes = known_nodes.value_or(0);
  uint32_t id_bits = o.node_id_bytes == 8 ? 64 : known_nodes ? IdBitsFor(num_nodes) : 32;
  while (true) {
    try {
      CscBuilder builder(budget, CscBufferBytes(budget, kBuilderReserveBytes), writer.spill_dir(),
                         id_bits, !o.keep_parallel_edges);
      EdgeListReader reader(sources.edge_list, known_nodes);
      if (progress) progress->Restart("reading edges", reader.bytes());
      const uint64_t id_limit = id_bits == 64 ? 0 : uint64_t{1} << id_bits;
      reader.ReadAll([&](std::span<const uint64_t> src, std::span<const uint64_t> dst) {
        if (id_limit != 0 && reader.max_id_seen() >= id_limit) throw NeedsWideIds{};
        AddImportedEdges(builder, src, dst, o.undirected);
        if (progress) progress->Update(reader.bytes_done());
      });
      if (!known_nodes) {
        if (!reader.any_edge()) {
          throw Error::Input(
              "the edge list has no edges, and no --features or --labels give "
              "the number of nodes",
              sources.edge_list);
        }
        num_nodes = reader.max_id_seen() + 1;
        CheckIdsAreDense(num_nodes, builder.edges_added(), sources.edge_list);
      }
      const uint32_t id_bytes = ImportNodeIdBytes(o, num_nodes);
      writer.meta().node_id_bytes = id_bytes;
      WriteGraph(builder, num_nodes, id_bytes, o.self_loops, writer, progress.get());
      break;
    } catch (const NeedsWideIds&) {
      id_bits = 64;  // rare: more than 2^32 nodes; the narrow runs are discarded
    }
  }
  if (features) {
    if (progress) progress->Restart("writing features", 0);
    WriteFeatures(*features, o.feature_dtype, budget, writer);
  } else {
    WriteNoFeatures(budget, writer);
  }
  if (labels) {
    ImportLabels(NpyColumn(*labels), num_nodes, writer);
  } else {
    WriteNoLabels(num_nodes, writer);
  }
  ImportSplits(split ? &*split : nullptr, split.has_value(), sources.split_dir, num_nodes, budget,
               writer);
  writer.Publish();
  return writer.meta();
}

}  // namespace strata
