// `strata info`: the JSON description of a dataset, and --verify catching damaged files.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::CommandResult;
using testing::Csc;
using testing::ExpectInputError;
using testing::ReadFileBytes;
using testing::RunStrata;
using testing::ScratchDir;
using testing::WriteTextFile;
namespace fs = std::filesystem;

// Imports the small fixture into s/ds and returns its path.
std::string ImportSmall(const ScratchDir& s) {
  testing::WriteSmallNpyDir(s / "in");
  CommandResult r = RunStrata({"import", s / "ds", "--npy", s / "in"});
  EXPECT_EQ(r.exit_status, 0) << r.err;
  return s / "ds";
}

void FlipByte(const std::string& path, uint64_t offset) {
  std::string bytes = ReadFileBytes(path);
  ASSERT_LT(offset, bytes.size());
  bytes[offset] ^= 0x01;
  fs::permissions(path, fs::perms::owner_write, fs::perm_options::add);
  WriteTextFile(path, bytes);
}

TEST(InfoCli, JsonHasEveryKeyWithTheDatasetsValues) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  CommandResult r = RunStrata({"info", ds, "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);  // throws on anything but one JSON value
  for (const char* key : {"num_nodes", "num_edges", "feature_dim", "feature_dtype", "num_classes",
                          "node_id_bytes", "split_sizes", "in_degree", "files"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j.at("num_nodes").get<uint64_t>(), testing::kSmallNodes);
  EXPECT_EQ(j.at("num_edges").get<uint64_t>(), testing::kSmallDistinctEdges);
  EXPECT_EQ(j.at("feature_dim").get<uint64_t>(), testing::kSmallDim);
  EXPECT_EQ(j.at("feature_dtype").get<std::string>(), "float32");
  EXPECT_EQ(j.at("num_classes").get<uint32_t>(), 3u);
  EXPECT_EQ(j.at("node_id_bytes").get<uint32_t>(), 4u);
  EXPECT_EQ(j.at("split_sizes").at("train").get<uint64_t>(), 2u);
  EXPECT_EQ(j.at("split_sizes").at("val").get<uint64_t>(), 1u);
  EXPECT_EQ(j.at("split_sizes").at("test").get<uint64_t>(), 2u);

  Csc csc = testing::ReferenceCsc(testing::kSmallNodes, testing::SmallEdges(), false, false);
  uint64_t min = UINT64_MAX, max = 0, zero = 0;
  for (uint64_t v = 0; v < testing::kSmallNodes; ++v) {
    uint64_t degree = csc.indptr[v + 1] - csc.indptr[v];
    min = std::min(min, degree);
    max = std::max(max, degree);
    zero += degree == 0;
  }
  const nlohmann::json& degree = j.at("in_degree");
  EXPECT_EQ(degree.at("min").get<uint64_t>(), min);
  EXPECT_EQ(degree.at("max").get<uint64_t>(), max);
  EXPECT_DOUBLE_EQ(degree.at("mean").get<double>(),
                   static_cast<double>(testing::kSmallDistinctEdges) / testing::kSmallNodes);
  EXPECT_EQ(degree.at("zero_count").get<uint64_t>(), zero);

  const nlohmann::json& files = j.at("files");
  for (const char* name : {"graph/indptr.bin", "graph/indices.bin", "features.bin", "labels.bin",
                           "split/train.bin", "split/val.bin", "split/test.bin"}) {
    ASSERT_TRUE(files.contains(name)) << name;
    EXPECT_EQ(files.at(name).at("bytes").get<uint64_t>(), fs::file_size(ds + "/" + name)) << name;
  }
  EXPECT_EQ(files.at("graph/indptr.bin").at("bytes").get<uint64_t>(),
            (testing::kSmallNodes + 1) * 8);
  EXPECT_EQ(files.at("graph/indices.bin").at("bytes").get<uint64_t>(),
            testing::kSmallDistinctEdges * 4);
}

TEST(InfoCli, TextOutputNamesTheCounts) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  CommandResult r = RunStrata({"info", ds});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_NE(r.out.find("nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("19"), std::string::npos) << r.out;  // edges
  EXPECT_NE(r.out.find("features.bin"), std::string::npos) << r.out;
}

TEST(InfoCli, VerifyPassesOnIntactDataset) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  CommandResult r = RunStrata({"info", ds, "--verify", "--json"});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j.value("verified", false), true);
}

TEST(InfoCli, VerifyFailsOnFlippedFeatureByte) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  FlipByte(ds + "/features.bin", 5);
  // Sizes still match, so plain info is content.
  EXPECT_EQ(RunStrata({"info", ds}).exit_status, 0);
  CommandResult r = RunStrata({"info", ds, "--verify"});
  ExpectInputError(r, {"features.bin"});
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(InfoCli, VerifyFailsOnFlippedIndicesByteWithJson) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  FlipByte(ds + "/graph/indices.bin", 0);
  CommandResult r = RunStrata({"info", ds, "--verify", "--json"});
  ExpectInputError(r, {"indices.bin"});
}

TEST(InfoCli, RefusesTruncatedFileEvenWithoutVerify) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  fs::resize_file(ds + "/labels.bin", fs::file_size(ds + "/labels.bin") - 4);
  ExpectInputError(RunStrata({"info", ds}), {"labels.bin"});
  ExpectInputError(RunStrata({"info", ds, "--verify"}), {"labels.bin"});
}

TEST(InfoCli, RefusesMissingFile) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  fs::remove(ds + "/split/val.bin");
  ExpectInputError(RunStrata({"info", ds}), {"val.bin"});
}

TEST(InfoCli, RefusesMissingDataset) {
  ScratchDir s;
  ExpectInputError(RunStrata({"info", s / "nothing"}), {"nothing"});
}

TEST(InfoCli, RefusesCorruptMetaJson) {
  ScratchDir s;
  std::string ds = ImportSmall(s);
  WriteTextFile(ds + "/meta.json", "{\"format\": \"strata-dataset\", ");
  ExpectInputError(RunStrata({"info", ds}), {"meta.json"});
}

TEST(InfoCli, RefusesNpyDirectoryAsDataset) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ExpectInputError(RunStrata({"info", s / "in"}), {"meta.json"});
}

}  // namespace
}  // namespace strata
