// The full graph's CSR files: row offsets read back and checked (not from 0, not to the end,
// decreasing: one input error naming the file), and Â read from a generated dataset equal to
// its definition over the stored graph, row by row: (i, n_i²) in column order among (j, n_i n_j)
// for each stored edge j -> i, n = 1 / sqrt(in-degree + 1), for all rows or a prefix.
#include "fullgraph/csr_files.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "strata/error.h"
#include "strata/generate.h"
#include "strata/graph.h"
#include "test_util.h"

namespace strata {
namespace {

std::string WriteOffsets(const testing::ScratchDir& dir, const std::vector<uint64_t>& offsets) {
  const std::string path = dir / "offsets.bin";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(offsets.data()), offsets.size() * sizeof(uint64_t));
  return path;
}

std::string InputErrorOf(const std::string& path, uint64_t rows, uint64_t end) {
  MemoryBudget budget(uint64_t{1} << 20);
  try {
    ReadRowOffsets(path, rows, end, budget, "test offsets");
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(ReadRowOffsets, ReadsRisingOffsetsAndRefusesOthersNamingTheFile) {
  testing::ScratchDir dir;
  MemoryBudget budget(uint64_t{1} << 20);
  const std::string good = WriteOffsets(dir, {0, 2, 2, 5});
  const ChargedArray<uint64_t> offsets = ReadRowOffsets(good, 3, 5, budget, "test offsets");
  EXPECT_EQ(std::vector<uint64_t>(offsets.data(), offsets.data() + 4),
            (std::vector<uint64_t>{0, 2, 2, 5}));
  EXPECT_EQ(budget.used(), 4 * sizeof(uint64_t));

  const std::string wrong_end = InputErrorOf(good, 3, 6);
  EXPECT_NE(wrong_end.find("offsets do not run from 0 to 6"), std::string::npos) << wrong_end;
  EXPECT_NE(wrong_end.find(good), std::string::npos) << wrong_end;
  const std::string not_zero = InputErrorOf(WriteOffsets(dir, {1, 2, 5}), 2, 5);
  EXPECT_NE(not_zero.find("offsets do not run from 0 to 5"), std::string::npos) << not_zero;
  const std::string falling = InputErrorOf(WriteOffsets(dir, {0, 3, 1, 5}), 3, 5);
  EXPECT_NE(falling.find("offsets decrease at row 1"), std::string::npos) << falling;
}

TEST(ReadNormalisedAdjacency, IsTheNormalisedAdjacencyWithSelfLoops) {
  testing::ScratchDir dir;
  GenerateOptions o = testing::SmallGraph(dir / "g", 300, 4, 3, 5, 3);
  GenerateDataset(o);
  const Dataset dataset = Dataset::Open(dir / "g");
  MemoryBudget budget(uint64_t{64} << 20);
  const CscGraph graph(dataset, budget);
  const uint64_t n = graph.num_nodes();
  auto norm = [&](uint64_t v) {
    return 1.0f / std::sqrt(static_cast<float>(graph.InDegree(v) + 1));
  };
  for (uint64_t rows : {n, uint64_t{17}}) {
    const ChargedCsr a = ReadNormalisedAdjacency(dataset, rows, budget);
    ASSERT_EQ(a.rows, rows);
    ASSERT_EQ(a.cols, n);
    for (uint64_t i = 0; i < rows; ++i) {
      // The definition: the stored in-neighbours, with i itself placed before the first >= i.
      std::vector<uint64_t> columns;
      bool self = false;
      for (uint64_t k = 0; k < graph.InDegree(i); ++k) {
        const uint64_t j = graph.InNeighbor(i, k);
        if (!self && j >= i) {
          columns.push_back(i);
          self = true;
        }
        columns.push_back(j);
      }
      if (!self) columns.push_back(i);
      ASSERT_EQ(a.indptr[i + 1] - a.indptr[i], columns.size()) << "row " << i;
      for (size_t c = 0; c < columns.size(); ++c) {
        const uint64_t e = a.indptr[i] + c;
        ASSERT_EQ(a.indices[e], columns[c]) << "row " << i;
        ASSERT_FLOAT_EQ(a.values[e], norm(i) * norm(columns[c])) << "row " << i;
      }
    }
  }
}

}  // namespace
}  // namespace strata
