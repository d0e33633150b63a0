#include "dataset/edge_list_reader.h"

#include <gtest/gtest.h>

#include "strata/dataset.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using Edges = std::vector<std::pair<uint64_t, uint64_t>>;

Edges ReadEdges(const std::string& text, std::optional<uint64_t> num_nodes = std::nullopt,
                size_t buffer_bytes = EdgeListReader::kDefaultBufferBytes) {
  testing::ScratchDir dir;
  testing::WriteTextFile(dir / "edges.txt", text);
  EdgeListReader reader(dir / "edges.txt", num_nodes, buffer_bytes);
  Edges edges;
  reader.ReadAll([&](std::span<const uint64_t> src, std::span<const uint64_t> dst) {
    for (size_t i = 0; i < src.size(); ++i) edges.emplace_back(src[i], dst[i]);
  });
  return edges;
}

std::string ErrorOf(const std::string& text, std::optional<uint64_t> num_nodes = std::nullopt) {
  try {
    ReadEdges(text, num_nodes);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    return e.what();
  }
  return "no error";
}

TEST(EdgeListReader, ParsesSnapStyleText) {
  std::string text =
      "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\n\n  2 3  \r\n4 5 # trailing comment\n6 7";
  EXPECT_EQ(ReadEdges(text), (Edges{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
}

TEST(EdgeListReader, HandlesLargeIdsAndEmptyFile) {
  EXPECT_EQ(ReadEdges("281474976710655 0\n"), (Edges{{kMaxNodeIds - 1, 0}}));
  EXPECT_NE(ErrorOf("281474976710656 0\n").find("too large"), std::string::npos);
  EXPECT_NE(ErrorOf("18446744073709551615 0\n").find("too large"), std::string::npos);
  EXPECT_NE(ErrorOf("0 1\n", 0).find("node id 0 is >= num_nodes 0"), std::string::npos);
  EXPECT_TRUE(ReadEdges("").empty());
  EXPECT_TRUE(ReadEdges("# only comments\n\n").empty());
}

TEST(EdgeListReader, ReadsManyLinesAcrossBufferBoundaries) {
  std::string text;
  Edges expected;
  for (uint64_t i = 0; i < 700000; ++i) {
    text += std::to_string(i) + " " + std::to_string(i * 7 % 1000003) + "\n";
    expected.emplace_back(i, i * 7 % 1000003);
  }
  EXPECT_EQ(ReadEdges(text), expected);
}

TEST(EdgeListReader, SmallBufferReadsTheSameEdgesAndBoundsTheLine) {
  std::string text = "# comment\r\n0 1\n22 33 # x\n\n444\t5555\r\n6 7";
  Edges expected = {{0, 1}, {22, 33}, {444, 5555}, {6, 7}};
  for (size_t buffer_bytes = 12; buffer_bytes < 40; ++buffer_bytes) {
    EXPECT_EQ(ReadEdges(text, std::nullopt, buffer_bytes), expected) << buffer_bytes;
  }
  try {
    ReadEdges("0 1\n2 3 # a comment longer than the buffer\n", std::nullopt, 16);
    FAIL() << "a line longer than the buffer was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("longer than 16 bytes"), std::string::npos) << e.what();
  }
}

TEST(EdgeListReader, NamesFileAndLineOfBadInput) {
  EXPECT_NE(ErrorOf("0 1\n1 -3\n").find("node id -3 is negative"), std::string::npos);
  EXPECT_NE(ErrorOf("0 1\n1 -3\n").find("edges.txt:2)"), std::string::npos);
  EXPECT_NE(ErrorOf("0 1\n\n1 x2\n").find("expected a node id, found 'x2'"), std::string::npos);
  EXPECT_NE(ErrorOf("0 1\n\n1 x2\n").find(":3)"), std::string::npos);
  EXPECT_NE(ErrorOf("0 1 2\n").find("extra token '2'"), std::string::npos);
  EXPECT_NE(ErrorOf("0\n").find("expected two node ids, found one"), std::string::npos);
  EXPECT_NE(ErrorOf("0 1.5\n").find("expected a node id, found '1.5'"), std::string::npos);
  EXPECT_NE(ErrorOf("99999999999999999999 1\n").find("too large"), std::string::npos);
  std::string range = ErrorOf("0 1\n2 10\n", 10);
  EXPECT_NE(range.find("node id 10 is >= num_nodes 10"), std::string::npos) << range;
  EXPECT_NE(range.find("edges.txt:2)"), std::string::npos) << range;
}

}  // namespace
}  // namespace strata
