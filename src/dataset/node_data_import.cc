#include "dataset/node_data_import.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "common/interrupt.h"
#include "dataset/build_common.h"
#include "dataset/feature_writer.h"
#include "dataset/split_writer.h"
#include "strata/error.h"

namespace strata {
namespace {

std::string ShapeText(const NpyHeader& header) { return NpyShapeString(header.shape); }

}  // namespace

IntColumn NpyColumn(const NpyReader& array) {
  IntColumn column;
  column.path = array.path();
  column.for_each = [&array](const IntColumn::Visit& visit) {
    std::vector<int64_t> chunk;
    const uint64_t total = array.header().num_elements();
    for (uint64_t first = 0; first < total; first += kImportChunkElements) {
      chunk.resize(std::min(kImportChunkElements, total - first));
      array.ReadInt64(first, chunk);
      for (size_t i = 0; i < chunk.size(); ++i) visit(first + i, chunk[i]);
      ThrowIfInterrupted();
    }
  };
  column.where = [](uint64_t index) { return fmt::format("element [{}]", index); };
  return column;
}

uint64_t CheckFeatureShape(const NpyReader& features) {
  const NpyHeader& h = features.header();
  if (h.shape.size() != 2) {
    throw Error::Input(
        fmt::format("features must be a 2-D array [N, D], found shape {}", ShapeText(h)),
        features.path());
  }
  if (!NpyIsFloat(h.dtype)) {
    throw Error::Input(fmt::format("features must be float16, float32 or float64, found {}",
                                   NpyDtypeName(h.dtype)),
                       features.path());
  }
  return h.shape[0];
}

void CheckLabelShape(const NpyReader& labels, uint64_t num_nodes) {
  const NpyHeader& h = labels.header();
  if (h.shape.size() != 1 || h.shape[0] != num_nodes) {
    throw Error::Input(fmt::format("labels must have shape ({},) to match the {} nodes, found {}",
                                   num_nodes, num_nodes, ShapeText(h)),
                       labels.path());
  }
  if (!NpyIsInteger(h.dtype)) {
    throw Error::Input(fmt::format("labels must be integers, found {}", NpyDtypeName(h.dtype)),
                       labels.path());
  }
}

void ImportFeatures(const NpyReader& features, FeatureDtype dtype, MemoryBudget& budget,
                    DatasetWriter& writer) {
  const uint64_t rows = features.header().shape[0];
  const uint64_t dim = features.header().shape[1];
  FeatureWriter out(writer.PathOf(kFeaturesFile), dim, dtype, features.path(), budget);
  out.ExpectRows(rows);
  if (dim > 0) {
    uint64_t rows_per_chunk = std::max<uint64_t>(1, kImportChunkElements / dim);
    ChargedArray<float> chunk(budget, rows_per_chunk * dim, "the feature import buffer");
    for (uint64_t first = 0; first < rows; first += rows_per_chunk) {
      uint64_t count = std::min(rows_per_chunk, rows - first);
      std::span<float> values(chunk.data(), count * dim);
      features.ReadFloat32(first * dim, values);
      out.AppendRows(values);
      ThrowIfInterrupted();
    }
  }
  RecordFeatures(out, dim, dtype, writer);
}

void RecordFeatures(FeatureWriter& out, uint64_t dim, FeatureDtype dtype, DatasetWriter& writer) {
  writer.Record(kFeaturesFile, out.Finish());
  DatasetMeta& meta = writer.meta();
  meta.feature_dim = dim;
  meta.feature_dtype = dtype;
  meta.row_stride_bytes = RowStrideBytes(dim, dtype);
}

void WriteNoFeatures(MemoryBudget& budget, DatasetWriter& writer) {
  FeatureWriter out(writer.PathOf(kFeaturesFile), 0, FeatureDtype::kFloat32, "", budget);
  writer.Record(kFeaturesFile, out.Finish());
  writer.meta().feature_dim = 0;
  writer.meta().row_stride_bytes = 0;
}

void ImportLabels(const IntColumn& labels, uint64_t num_nodes, DatasetWriter& writer) {
  FileWriter out(writer.PathOf(kLabelsFile));
  int64_t max_label = -1;
  uint64_t count = 0;
  // The classes seen, counted up to the most a plausible labelling needs to show.
  constexpr size_t kClassesCounted = size_t{1} << 16;
  std::unordered_set<int64_t> classes;
  labels.for_each([&](uint64_t index, int64_t value) {
    if (index >= num_nodes) {
      throw Error::Input(fmt::format("more labels than the {} nodes", num_nodes), labels.path,
                         labels.where(index));
    }
    if (value < -1 || value > INT32_MAX) {
      throw Error::Input(fmt::format("label {} of node {} is out of range: labels are class "
                                     "ids >= 0, or -1 for unlabeled",
                                     value, index),
                         labels.path, labels.where(index));
    }
    max_label = std::max(max_label, value);
    if (value >= 0 && classes.size() <= kClassesCounted) classes.insert(value);
    out.AppendValue(static_cast<int32_t>(value));
    ++count;
  });
  if (count != num_nodes) {
    throw Error::Input(fmt::format("{} labels for {} nodes", count, num_nodes), labels.path);
  }
  // The class count is the largest label + 1, and the model has an output for each: labels
  // that jump (ids of some other numbering, one bad value) would make a model of millions.
  const uint64_t num_classes = static_cast<uint64_t>(max_label + 1);
  if (num_classes > kClassesCounted && classes.size() * 64 < num_classes) {
    throw Error::Input(
        fmt::format("the labels hold {} distinct classes but the largest is {}, which would "
                    "make {} classes: labels must number the classes 0..C-1 (renumber them)",
                    classes.size(), max_label, num_classes),
        labels.path);
  }
  writer.Record(kLabelsFile, out.Finish());
  writer.meta().num_classes = static_cast<uint32_t>(num_classes);
}

void WriteNoLabels(uint64_t num_nodes, DatasetWriter& writer) {
  FileWriter out(writer.PathOf(kLabelsFile));
  for (uint64_t i = 0; i < num_nodes; ++i) out.AppendValue(int32_t{-1});
  writer.Record(kLabelsFile, out.Finish());
  writer.meta().num_classes = 0;
}

void CheckSplitShape(const NpyReader& ids) {
  const NpyHeader& h = ids.header();
  if (h.shape.size() != 1 || !NpyIsInteger(h.dtype)) {
    throw Error::Input(fmt::format("a split must be a 1-D integer array, found {} of shape {}",
                                   NpyDtypeName(h.dtype), ShapeText(h)),
                       ids.path());
  }
}

void ImportSplit(Split split, const IntColumn* ids, NodeBits& seen, DatasetWriter& writer) {
  SplitWriter out(writer.PathOf(SplitFile(split)), writer.meta().node_id_bytes, seen);
  if (ids != nullptr) {
    ids->for_each([&](uint64_t index, int64_t id) {
      auto error = [&](const std::string& what) {
        return Error::Input(what, ids->path, ids->where(index));
      };
      if (id < 0) throw error(fmt::format("node id {} is negative", id));
      switch (out.Add(static_cast<uint64_t>(id))) {
        case SplitWriter::AddResult::kAdded:
          break;
        case SplitWriter::AddResult::kOutOfRange:
          throw error(fmt::format("node id {} is >= num_nodes {}", id, seen.num_nodes()));
        case SplitWriter::AddResult::kRepeated:
          throw error(fmt::format(
              "node id {} appears twice in the {} split, or in an earlier split too (train, "
              "val, test): the splits must not overlap",
              id, SplitName(split)));
      }
    });
  }
  uint64_t size = out.size();
  writer.Record(SplitFile(split), out.Finish());
  DatasetMeta& meta = writer.meta();
  (split == Split::kTrain ? meta.train_size
   : split == Split::kVal ? meta.val_size
                          : meta.test_size) = size;
}

}  // namespace strata
