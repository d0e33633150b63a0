#include <gtest/gtest.h>

#include "strata/dataset.h"
#include "test_util.h"

namespace strata {
namespace {

// generate -> export as an edge list -> import the list: the same CSC, byte for byte.
TEST(ExportCli, EdgeListRoundTripsTheGraph) {
  testing::ScratchDir dir;
  auto gen = testing::RunStrata({"generate", dir / "g", "--nodes", "5000", "--avg-degree", "6",
                                 "--feature-dim", "4", "--classes", "3", "--seed", "9"});
  ASSERT_EQ(gen.exit_status, 0) << gen.err;
  auto out = testing::RunStrata({"export", dir / "g", "--edge-list", dir / "edges.txt"});
  ASSERT_EQ(out.exit_status, 0) << out.err;
  auto imp = testing::RunStrata({"import", dir / "i", "--edge-list", dir / "edges.txt"});
  ASSERT_EQ(imp.exit_status, 0) << imp.err;
  DatasetMeta a = Dataset::Open(dir / "g").meta();
  DatasetMeta b = Dataset::Open(dir / "i").meta();
  // Node 4999 may be isolated, so compare up to the imported node count.
  ASSERT_LE(b.num_nodes, a.num_nodes);
  EXPECT_EQ(a.num_edges, b.num_edges);
  EXPECT_EQ(a.files["graph/indices.bin"].xxh64, b.files["graph/indices.bin"].xxh64);
  std::vector<std::string> names = testing::ListDirectory(dir.path());
  EXPECT_EQ(names.size(), 3u) << "temporary files left beside the outputs";
}

TEST(ExportCli, RefusesMissingDataset) {
  testing::ScratchDir dir;
  auto out = testing::RunStrata({"export", dir / "none", "--edge-list", dir / "e.txt"});
  EXPECT_EQ(out.exit_status, 2);
  EXPECT_TRUE(testing::ListDirectory(dir.path()).empty());
}

}  // namespace
}  // namespace strata
