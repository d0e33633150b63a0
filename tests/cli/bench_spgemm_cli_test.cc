// `strata bench spgemm` end to end on a tiny generated graph with sparse features: every JSON
// field, and the sizes (Â's and X's stored values, the product's, the multiply-adds) equal to
// those computed here from the dataset's files; dense features are a one-line refusal.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "strata/generate.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::CommandResult;
using testing::RunStrata;
using testing::ScratchDir;

TEST(BenchSpGemmCli, SizesMatchTheProductComputedFromTheFiles) {
  ScratchDir dir;
  GenerateOptions options = testing::SmallGraph(dir / "g", 300, 60, 3, 5, 2);
  options.feature_density = 0.05;
  const DatasetMeta meta = GenerateDataset(options);
  ASSERT_TRUE(meta.sparse_features);

  CommandResult run =
      RunStrata({"bench", "spgemm", dir / "g", "--threads", "2", "--repeats", "3", "--json"});
  ASSERT_EQ(run.exit_status, 0) << run.err;
  const nlohmann::json j = nlohmann::json::parse(run.out);

  // Row i of Â · X has the union of the columns of X's rows i and i's in-neighbours.
  const testing::Csc graph = testing::ReadCsc(dir / "g");
  const auto x_indptr = testing::ReadArrayFile<uint64_t>(dir / "g/features/indptr.bin");
  const auto x_indices = testing::ReadArrayFile<uint32_t>(dir / "g/features/indices.bin");
  uint64_t product_nnz = 0, multiply_adds = 0;
  for (uint64_t i = 0; i < meta.num_nodes; ++i) {
    std::vector<uint64_t> rows = {i};
    rows.insert(rows.end(), graph.indices.begin() + graph.indptr[i],
                graph.indices.begin() + graph.indptr[i + 1]);
    std::set<uint32_t> columns;
    for (uint64_t k : rows) {
      columns.insert(x_indices.begin() + x_indptr[k], x_indices.begin() + x_indptr[k + 1]);
      multiply_adds += x_indptr[k + 1] - x_indptr[k];
    }
    product_nnz += columns.size();
  }
  EXPECT_EQ(j["rows"], meta.num_nodes);
  EXPECT_EQ(j["cols"], meta.feature_dim);
  EXPECT_EQ(j["a_nnz"], meta.num_nodes + graph.indices.size());
  EXPECT_EQ(j["x_nnz"], x_indices.size());
  EXPECT_EQ(j["product_nnz"], product_nnz);
  EXPECT_EQ(j["multiply_adds"], multiply_adds);
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["repeats"], 3);
  for (const char* key : {"min_s", "median_s", "gflops"}) {
    EXPECT_TRUE(j[key].is_number()) << key;
  }
  EXPECT_LE(j["min_s"].get<double>(), j["median_s"].get<double>());
  EXPECT_GT(j["budget_peak_bytes"].get<uint64_t>(), 0u);
  EXPECT_GT(j["peak_rss_bytes"].get<uint64_t>(), 0u);

  CommandResult line = RunStrata({"bench", "spgemm", dir / "g", "--repeats", "1"});
  ASSERT_EQ(line.exit_status, 0) << line.err;
  EXPECT_NE(line.out.find(std::to_string(product_nnz) + " stored"), std::string::npos) << line.out;
}

TEST(BenchSpGemmCli, DenseFeaturesAreRefusedInOneLine) {
  ScratchDir dir;
  GenerateDataset(testing::SmallGraph(dir / "dense", 200, 16, 3));
  testing::ExpectInputError(RunStrata({"bench", "spgemm", dir / "dense"}),
                            {"dense features", dir / "dense"});
}

TEST(BenchSpGemmCli, ABudgetTooSmallIsRefusedInOneLine) {
  ScratchDir dir;
  GenerateOptions options = testing::SmallGraph(dir / "g", 2000, 500, 3, 8, 2);
  options.feature_density = 0.05;
  GenerateDataset(options);
  testing::ExpectInputError(RunStrata({"bench", "spgemm", dir / "g", "--memory-budget", "64K"}),
                            {"--memory-budget"});
}

}  // namespace
}  // namespace strata
