// What the partition tests share: a generated SBM dataset whose classes are its communities,
// with float16 features (the partitioned layout copies rows as stored, so a rewrite loses
// nothing), and readers of the layout's raw files of node ids and of offsets.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "storage/file.h"
#include "strata/dataset.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {

class GeneratedInputTest : public ::testing::Test {
 protected:
  static constexpr uint64_t kNodes = 3000;

  void SetUp() override {
    GenerateOptions g = testing::SmallGraph(dir_ / "in", kNodes, 24, 5, 8, 11);
    g.feature_dtype = FeatureDtype::kFloat16;
    GenerateDataset(g);
  }

  testing::ScratchDir dir_;
};

// The node ids in `file` of `dataset`, stored in the dataset's id width.
inline std::vector<uint64_t> ReadNodeIds(const Dataset& dataset, std::string_view file) {
  const std::string bytes = ReadWholeFile(dataset.PathOf(file));
  const uint32_t width = dataset.meta().node_id_bytes;
  std::vector<uint64_t> ids(bytes.size() / width);
  for (size_t i = 0; i < ids.size(); ++i) {
    ids[i] = LoadNodeId(reinterpret_cast<const std::byte*>(bytes.data()) + i * width, width);
  }
  return ids;
}

// The uint64 values in `file` of `dataset` (partition offsets, hub indptr).
inline std::vector<uint64_t> ReadU64s(const Dataset& dataset, std::string_view file) {
  const std::string bytes = ReadWholeFile(dataset.PathOf(file));
  std::vector<uint64_t> values(bytes.size() / 8);
  std::memcpy(values.data(), bytes.data(), values.size() * 8);
  return values;
}

}  // namespace strata
