#include "strata/dataset.h"

#include <gtest/gtest.h>

#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

TEST(Dataset, RowStrideKeepsRowsInsideBlocks) {
  EXPECT_EQ(RowStrideBytes(0, FeatureDtype::kFloat32), 0u);
  EXPECT_EQ(RowStrideBytes(1, FeatureDtype::kFloat32), 4u);
  EXPECT_EQ(RowStrideBytes(100, FeatureDtype::kFloat32), 512u);
  EXPECT_EQ(RowStrideBytes(128, FeatureDtype::kFloat32), 512u);
  EXPECT_EQ(RowStrideBytes(128, FeatureDtype::kFloat16), 256u);
  EXPECT_EQ(RowStrideBytes(1024, FeatureDtype::kFloat32), 4096u);
  EXPECT_EQ(RowStrideBytes(1025, FeatureDtype::kFloat32), 8192u);
  EXPECT_EQ(RowStrideBytes(1433, FeatureDtype::kFloat32), 8192u);
  for (uint64_t dim = 1; dim < 3000; dim += 7) {
    uint64_t stride = RowStrideBytes(dim, FeatureDtype::kFloat16);
    EXPECT_GE(stride, dim * 2);
    if (stride <= kBlockBytes) {
      EXPECT_EQ(kBlockBytes % stride, 0u) << dim;
    } else {
      EXPECT_EQ(stride % kBlockBytes, 0u) << dim;
    }
  }
}

TEST(Dataset, NodeIdWidthFollowsNodeCount) {
  EXPECT_EQ(NodeIdBytesFor(2708), 4u);
  EXPECT_EQ(NodeIdBytesFor(uint64_t{1} << 32), 4u);
  EXPECT_EQ(NodeIdBytesFor((uint64_t{1} << 32) + 1), 8u);
}

TEST(Dataset, MetaRoundTripsThroughJson) {
  DatasetMeta meta;
  meta.num_nodes = 10;
  meta.num_edges = 30;
  meta.feature_dim = 3;
  meta.feature_dtype = FeatureDtype::kFloat16;
  meta.row_stride_bytes = RowStrideBytes(3, FeatureDtype::kFloat16);
  meta.num_classes = 4;
  meta.node_id_bytes = 8;
  meta.in_degree = {0, 9, 3.0, 2};
  meta.train_size = 5;
  meta.val_size = 2;
  meta.test_size = 1;
  meta.files["labels.bin"] = {40, 0xfedcba9876543210ull};
  DatasetMeta back = DatasetMeta::FromJson(meta.ToJson(), "meta.json");
  EXPECT_EQ(back.ToJson(), meta.ToJson());
  EXPECT_EQ(back.files["labels.bin"].xxh64, 0xfedcba9876543210ull);
}

TEST(Dataset, RejectsBadMetaWithFileName) {
  auto error_of = [](const std::string& text) -> std::string {
    try {
      DatasetMeta::FromJson(text, "d/meta.json");
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_NE(error_of("{").find("not valid JSON"), std::string::npos);
  EXPECT_NE(error_of("{").find("(d/meta.json)"), std::string::npos);
  EXPECT_NE(error_of(R"({"format":"other"})").find("not a Strata dataset"), std::string::npos);
  DatasetMeta meta;
  std::string json = meta.ToJson();
  json.replace(json.find("\"version\": 1"), 12, "\"version\": 9");
  EXPECT_NE(error_of(json).find("version 9 is not supported"), std::string::npos);
}

TEST(Dataset, OpenRefusesMissingDirectory) {
  testing::ScratchDir dir;
  EXPECT_THROW(Dataset::Open(dir / "none"), Error);
}

}  // namespace
}  // namespace strata
