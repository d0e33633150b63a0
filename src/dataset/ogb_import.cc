// `strata import OUT --ogb DIR`: an OGB node-property-prediction directory as the `ogb` package
// downloads it, in its text form (raw/*.csv.gz) or its binary form (raw/data.npz and
// raw/node-label.npz, ogbn-papers100M's), with the split in split/NAME/*.csv.gz.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <vector>

#include "common/interrupt.h"
#include "dataset/build_common.h"
#include "dataset/csv_reader.h"
#include "dataset/dataset_writer.h"
#include "dataset/feature_writer.h"
#include "dataset/import_common.h"
#include "dataset/node_data_import.h"
#include "storage/file.h"
#include "storage/zip_archive.h"
#include "strata/error.h"
#include "strata/import.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kEdgeBatch = uint64_t{1} << 18;

// The one count a single-graph dataset's num-node-list.csv.gz or num-edge-list.csv.gz holds.
uint64_t ReadSingleCount(const std::string& path) {
  CsvReader csv(path);
  if (!csv.Next()) throw Error::Input("is empty: expected one count", path);
  csv.ExpectFields(1, "count");
  const uint64_t count = csv.Id(0);
  if (csv.Next()) {
    throw Error::Input(
        "lists several graphs: strata imports single-graph datasets "
        "(node property prediction)",
        path);
  }
  return count;
}

// The same from a binary-form array: exactly one element.
uint64_t SingleCount(const NpyReader& counts) {
  if (counts.num_elements() != 1 || !NpyIsInteger(counts.dtype())) {
    throw Error::Input(fmt::format("expected one integer (a single graph), found {} of shape {}",
                                   NpyDtypeName(counts.dtype()), NpyShapeString(counts.shape())),
                       counts.path());
  }
  int64_t count = 0;
  counts.ReadInt64(0, {&count, 1});
  if (count < 0) throw Error::Input(fmt::format("count {} is negative", count), counts.path());
  return static_cast<uint64_t>(count);
}

void ExpectEdgeCount(uint64_t found, uint64_t declared, const std::string& path) {
  if (found != declared) {
    throw Error::Input(fmt::format("holds {} edges, but num-edge-list says {}", found, declared),
                       path);
  }
}

// raw/edge.csv.gz: one "src,dst" a line.
void ReadEdgeCsv(const std::string& path, uint64_t num_nodes, uint64_t num_edges, bool undirected,
                 MemoryBudget& budget, CscBuilder& builder, ProgressBar* progress) {
  CsvReader csv(path);
  ChargedArray<uint64_t> ids(budget, 2 * kEdgeBatch, "the edge import buffer");
  uint64_t* src = ids.data();
  uint64_t* dst = ids.data() + kEdgeBatch;
  uint64_t batched = 0, edges = 0;
  if (progress) progress->Restart("reading edges", num_edges);
  auto flush = [&] {
    AddImportedEdges(builder, {src, batched}, {dst, batched}, undirected);
    batched = 0;
    if (progress) progress->Update(edges);
    ThrowIfInterrupted();
  };
  while (csv.Next()) {
    csv.ExpectFields(2, "node ids");
    for (int k = 0; k < 2; ++k) {
      const uint64_t id = csv.Id(k);
      if (id >= num_nodes) csv.Fail(fmt::format("node id {} is >= num_nodes {}", id, num_nodes));
      (k == 0 ? src : dst)[batched] = id;
    }
    ++edges;
    if (++batched == kEdgeBatch) flush();
  }
  flush();
  ExpectEdgeCount(edges, num_edges, path);
}

// raw/node-feat.csv.gz: N lines of D numbers.
void ReadFeatureCsv(const std::string& path, uint64_t num_nodes, FeatureDtype dtype,
                    MemoryBudget& budget, DatasetWriter& writer, ProgressBar* progress) {
  CsvReader csv(path);
  if (!csv.Next()) throw Error::Input("is empty: expected one line of features per node", path);
  const uint64_t dim = csv.fields();
  FeatureWriter out(writer.PathOf(kFeaturesFile), dim, dtype, path, budget);
  out.ExpectRows(num_nodes);
  const uint64_t rows_per_chunk = std::max<uint64_t>(1, (uint64_t{1} << 20) / dim);
  ChargedArray<float> chunk(budget, rows_per_chunk * dim, "the feature import buffer");
  if (progress) progress->Restart("reading features", num_nodes);
  uint64_t rows = 0, in_chunk = 0;
  do {
    csv.ExpectFields(dim, "features (as on line 1)");
    if (rows == num_nodes) csv.Fail(fmt::format("more feature rows than the {} nodes", num_nodes));
    for (uint64_t k = 0; k < dim; ++k) chunk[in_chunk * dim + k] = csv.Float(k);
    ++rows;
    if (++in_chunk == rows_per_chunk) {
      out.AppendRows({chunk.data(), in_chunk * dim});
      in_chunk = 0;
      if (progress) progress->Update(rows);
      ThrowIfInterrupted();
    }
  } while (csv.Next());
  out.AppendRows({chunk.data(), in_chunk * dim});
  if (rows != num_nodes) {
    throw Error::Input(
        fmt::format("holds {} feature rows, but num-node-list says {} nodes", rows, num_nodes),
        path);
  }
  RecordFeatures(out, dim, dtype, writer);
}

// A label as OGB stores it, a float (NaN: unlabeled), as Strata's class id or -1.
int64_t LabelOf(float value, const std::string& path, const std::string& where) {
  if (std::isnan(value)) return -1;
  // 2^31 is exact as a float, where INT32_MAX rounds up to it and would let 2^31 through.
  constexpr float kClassLimit = 2147483648.0f;
  if (!(value >= 0 && value < kClassLimit) || value != std::floor(value)) {
    throw Error::Input(
        fmt::format("label {} is not a class id (an integer >= 0, or nan for unlabeled)", value),
        path, where);
  }
  return static_cast<int64_t>(value);
}

// A CSV file read as one integer a line, `parse` turning each line into it.
template <typename Parse>
IntColumn CsvColumn(const std::string& path, Parse parse) {
  IntColumn column;
  column.path = path;
  column.where = [](uint64_t index) { return fmt::format("line {}", index + 1); };
  column.for_each = [path, parse](const IntColumn::Visit& visit) {
    CsvReader csv(path);
    for (uint64_t index = 0; csv.Next(); ++index) visit(index, parse(csv));
  };
  return column;
}

// raw/node-label.csv.gz: one label a line.
IntColumn LabelCsvColumn(const std::string& path) {
  return CsvColumn(path, [path](const CsvReader& csv) {
    if (csv.fields() > 1) {
      csv.Fail(
          fmt::format("has {} labels a node (a multi-task dataset); strata trains "
                      "single-task datasets",
                      csv.fields()));
    }
    return LabelOf(csv.Float(0), path, fmt::format("line {}", csv.line()));
  });
}

// raw/node-label.npz's node_label: [N] or [N, 1] floats.
IntColumn LabelNpyColumn(const NpyReader& labels) {
  if (labels.ndim() == 2 && labels.shape()[1] != 1) {
    throw Error::Input(fmt::format("has {} labels a node (a multi-task dataset); strata trains "
                                   "single-task datasets",
                                   labels.shape()[1]),
                       labels.path());
  }
  if (labels.ndim() < 1 || labels.ndim() > 2 || !NpyIsFloat(labels.dtype())) {
    throw Error::Input(fmt::format("node_label must be floats of shape (N, 1), found {} of "
                                   "shape {}",
                                   NpyDtypeName(labels.dtype()), NpyShapeString(labels.shape())),
                       labels.path());
  }
  IntColumn column;
  column.path = labels.path();
  column.where = [](uint64_t index) { return fmt::format("element [{}]", index); };
  column.for_each = [&labels](const IntColumn::Visit& visit) {
    std::vector<float> chunk;
    const uint64_t total = labels.num_elements();
    for (uint64_t first = 0; first < total; first += uint64_t{1} << 20) {
      chunk.resize(std::min(uint64_t{1} << 20, total - first));
      labels.ReadFloat32(first, chunk);
      for (size_t i = 0; i < chunk.size(); ++i) {
        visit(first + i, LabelOf(chunk[i], labels.path(), fmt::format("element [{}]", first + i)));
      }
      ThrowIfInterrupted();
    }
  };
  return column;
}

// split/NAME/{train,valid,test}.csv.gz: one node id a line.
IntColumn SplitCsvColumn(const std::string& path) {
  return CsvColumn(path, [](const CsvReader& csv) {
    csv.ExpectFields(1, "node id");
    return static_cast<int64_t>(csv.Id(0));
  });
}

// split/NAME, where NAME is --ogb-split or the only directory under split/.
std::string SplitDirectory(const std::string& dir, const std::string& name) {
  const std::string splits = dir + "/split";
  if (!fs::is_directory(splits)) {
    throw Error::Input("no split/ directory: not an OGB node-property-prediction dataset", dir);
  }
  if (!name.empty()) {
    if (!fs::is_directory(splits + "/" + name)) {
      throw Error::Input(fmt::format("no split named '{}' (--ogb-split)", name), splits);
    }
    return splits + "/" + name;
  }
  std::vector<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(splits)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (names.size() != 1) {
    throw Error::Input(names.empty()
                           ? std::string("holds no split directory")
                           : fmt::format("holds {} splits ({}): name one with --ogb-split",
                                         names.size(), fmt::join(names, ", ")),
                       splits);
  }
  return splits + "/" + names[0];
}

// One bit per node, set where the written labels.bin holds a class id.
ChargedArray<uint64_t> LabeledNodes(uint64_t num_nodes, MemoryBudget& budget,
                                    const DatasetWriter& writer) {
  ChargedArray<uint64_t> bits(budget, (num_nodes + 63) / 64, "the labeled-node bitmap");
  std::fill(bits.data(), bits.data() + bits.size(), 0);
  const FileReader labels(writer.PathOf(kLabelsFile));
  std::vector<int32_t> chunk;
  for (uint64_t first = 0; first < num_nodes; first += chunk.size()) {
    chunk.resize(std::min<uint64_t>(uint64_t{1} << 20, num_nodes - first));
    labels.ReadExact(first * sizeof(int32_t), chunk.data(), chunk.size() * sizeof(int32_t));
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (chunk[i] >= 0) bits[(first + i) / 64] |= uint64_t{1} << ((first + i) % 64);
    }
  }
  return bits;
}

// A split names labeled nodes only: training and evaluation need their labels.
void ImportSplits(const std::string& split_dir, uint64_t num_nodes, MemoryBudget& budget,
                  DatasetWriter& writer) {
  const ChargedArray<uint64_t> labeled = LabeledNodes(num_nodes, budget, writer);
  NodeBits seen(num_nodes, budget);
  for (Split split : kAllSplits) {
    const std::string path =
        fmt::format("{}/{}.csv.gz", split_dir, split == Split::kVal ? "valid" : SplitName(split));
    if (!fs::exists(path)) throw Error::Input("is missing", path);
    IntColumn ids = SplitCsvColumn(path);
    ids.for_each = [read = ids.for_each, &labeled, num_nodes, path](const IntColumn::Visit& visit) {
      read([&](uint64_t index, int64_t id) {
        const auto node = static_cast<uint64_t>(id);
        if (node < num_nodes && (labeled[node / 64] >> (node % 64) & 1) == 0) {
          throw Error::Input(fmt::format("node id {} has no label (nan in node-label)", id), path,
                             fmt::format("line {}", index + 1));
        }
        visit(index, id);
      });
    };
    ImportSplit(split, &ids, seen, writer);
  }
}

// Extracts `name` of an archive into the staging directory, named "ARCHIVE:name" in errors.
std::optional<NpyReader> ExtractArray(const ZipArchive& archive, const std::string& name,
                                      bool required, const DatasetWriter& writer) {
  const ZipMember* member = archive.Find(name);
  if (member == nullptr) {
    if (!required) return std::nullopt;
    throw Error::Input(fmt::format("no member {}", name), archive.path());
  }
  return ExtractNpyMember(archive, *member, writer.spill_dir() + "/ogb-" + name);
}

void ImportTextForm(const std::string& raw, uint64_t num_nodes, const ImportOptions& o,
                    MemoryBudget& budget, DatasetWriter& writer, ProgressBar* progress) {
  const uint64_t num_edges = ReadSingleCount(raw + "/num-edge-list.csv.gz");
  {
    CscBuilder builder(budget, CscBufferBytes(budget, kBuilderReserveBytes), writer.spill_dir(),
                       writer.meta().node_id_bytes == 8 ? 64 : IdBitsFor(num_nodes),
                       !o.keep_parallel_edges);
    ReadEdgeCsv(raw + "/edge.csv.gz", num_nodes, num_edges, o.undirected, budget, builder,
                progress);
    WriteGraph(builder, num_nodes, writer.meta().node_id_bytes, o.self_loops, writer, progress);
  }
  if (fs::exists(raw + "/node-feat.csv.gz")) {
    ReadFeatureCsv(raw + "/node-feat.csv.gz", num_nodes, o.feature_dtype, budget, writer, progress);
  } else {
    WriteNoFeatures(budget, writer);
  }
  if (fs::exists(raw + "/node-label.csv.gz")) {
    ImportLabels(LabelCsvColumn(raw + "/node-label.csv.gz"), num_nodes, writer);
  } else {
    WriteNoLabels(num_nodes, writer);
  }
}

void ImportBinaryForm(const std::string& raw, const ImportOptions& o, MemoryBudget& budget,
                      DatasetWriter& writer, ProgressBar* progress, uint64_t& num_nodes) {
  std::optional<NpyReader> features;
  {
    const ZipArchive data(raw + "/data.npz");
    num_nodes = SingleCount(*ExtractArray(data, "num_nodes_list.npy", true, writer));
    const uint64_t num_edges = SingleCount(*ExtractArray(data, "num_edges_list.npy", true, writer));
    writer.meta().node_id_bytes = ImportNodeIdBytes(o, num_nodes);
    {
      const NpyReader edges = *ExtractArray(data, "edge_index.npy", true, writer);
      if (edges.ndim() == 2 && edges.shape()[0] == 2) {
        ExpectEdgeCount(edges.shape()[1], num_edges, edges.path());
      }
      CscBuilder builder(budget, CscBufferBytes(budget, kBuilderReserveBytes), writer.spill_dir(),
                         writer.meta().node_id_bytes == 8 ? 64 : IdBitsFor(num_nodes),
                         !o.keep_parallel_edges);
      ReadEdgeIndex(edges, num_nodes, o.undirected, budget, builder, progress);
      WriteGraph(builder, num_nodes, writer.meta().node_id_bytes, o.self_loops, writer, progress);
    }
    fs::remove(writer.spill_dir() + "/ogb-edge_index.npy");  // as large as the edges: free it
    features = ExtractArray(data, "node_feat.npy", false, writer);
  }
  if (features) {
    if (CheckFeatureShape(*features) != num_nodes) {
      throw Error::Input(fmt::format("holds {} feature rows, but num_nodes_list says {} nodes",
                                     features->rows(), num_nodes),
                         features->path());
    }
    if (progress) progress->Restart("writing features", 0);
    ImportFeatures(*features, o.feature_dtype, budget, writer);
    features.reset();
    fs::remove(writer.spill_dir() + "/ogb-node_feat.npy");
  } else {
    WriteNoFeatures(budget, writer);
  }
  if (fs::exists(raw + "/node-label.npz")) {
    const ZipArchive label_archive(raw + "/node-label.npz");
    const NpyReader labels = *ExtractArray(label_archive, "node_label.npy", true, writer);
    ImportLabels(LabelNpyColumn(labels), num_nodes, writer);
  } else {
    WriteNoLabels(num_nodes, writer);
  }
}

}  // namespace

DatasetMeta ImportOgbDirectory(const std::string& dir, const std::string& split_name,
                               const ImportOptions& o) {
  CheckImportOptions(o);
  if (!fs::is_directory(dir)) {
    throw Error::Input("--ogb expects the dataset's directory (holding raw/ and split/)", dir);
  }
  const std::string raw = dir + "/raw";
  const bool binary = fs::exists(raw + "/data.npz");
  if (!binary && !fs::exists(raw + "/edge.csv.gz")) {
    throw Error::Input(
        "holds neither raw/edge.csv.gz nor raw/data.npz: not an OGB "
        "node-property-prediction dataset",
        dir);
  }
  const std::string split_dir = SplitDirectory(dir, split_name);
  MemoryBudget budget(o.memory_budget_bytes);
  DatasetWriter writer(o.out, o.replace_existing, {dir});
  auto progress = MakeImportProgress(o);
  uint64_t num_nodes = 0;
  if (binary) {
    ImportBinaryForm(raw, o, budget, writer, progress.get(), num_nodes);
  } else {
    num_nodes = ReadSingleCount(raw + "/num-node-list.csv.gz");
    writer.meta().node_id_bytes = ImportNodeIdBytes(o, num_nodes);
    ImportTextForm(raw, num_nodes, o, budget, writer, progress.get());
  }
  ImportSplits(split_dir, num_nodes, budget, writer);
  writer.Publish();
  return writer.meta();
}

}  // namespace strata
