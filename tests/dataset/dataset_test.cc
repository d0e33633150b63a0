#include "strata/dataset.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

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

// The meta.json fuzzer's crashes (fuzz/meta_json_fuzzer.cc): an xxh64 beyond 64 bits escaped
// as std::out_of_range, and an integer too large for its field (which nlohmann reads as a
// float) was converted with undefined behaviour. Both, and the looser forms around them that
// were silently accepted, are input errors.
TEST(Dataset, RejectsMetaNumbersOutsideTheirFields) {
  const nlohmann::json valid = nlohmann::json::parse(DatasetMeta().ToJson());
  auto kind_of = [&](const std::string& pointer, const nlohmann::json& value) {
    nlohmann::json j = valid;
    j[nlohmann::json::json_pointer(pointer)] = value;
    try {
      DatasetMeta::FromJson(j.dump(), "meta.json");
    } catch (const Error& e) {
      return e.kind() == Error::Kind::kInput ? std::string("input error") : e.what();
    }
    return std::string("no error");
  };
  for (const char* xxh64 : {"adcfa880d15d73926", "-1", "0x12", "12zz", " 12", ""}) {
    EXPECT_EQ(kind_of("/files/labels.bin", {{"bytes", 4}, {"xxh64", xxh64}}), "input error")
        << xxh64;
  }
  EXPECT_EQ(kind_of("/files/labels.bin", {{"bytes", 4}, {"xxh64", "ffffffffffffffff"}}),
            "no error");
  const nlohmann::json partition = {
      {"method", "gap"}, {"hubs", 0}, {"edge_cut_ratio", 0}, {"label_balance", 0}};
  nlohmann::json parts_too_large = partition;
  parts_too_large["parts"] = nlohmann::json::parse("184467440737095516164");
  EXPECT_EQ(kind_of("/partition", parts_too_large), "input error");
  EXPECT_EQ(kind_of("/version", 1e30), "input error");
  EXPECT_EQ(kind_of("/num_nodes", -1), "input error");
  EXPECT_EQ(kind_of("/num_classes", uint64_t{1} << 32), "input error");
  EXPECT_EQ(kind_of("/node_id_bytes", 4.0), "input error");
  EXPECT_EQ(kind_of("/split_sizes/train", true), "input error");
}

TEST(Dataset, OpenRefusesMissingDirectory) {
  testing::ScratchDir dir;
  EXPECT_THROW(Dataset::Open(dir / "none"), Error);
}

}  // namespace
}  // namespace strata
