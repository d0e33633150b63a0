// `strata import` on good input: counts and CSC contents against an in-memory reference, for
// the shared Planetoid datasets and for small fixtures in both input formats.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "cli_test_helpers.h"
#include "repository_dataset.h"
#include "storage/zip_builder.h"
#include "strata/npy.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::CommandResult;
using testing::Csc;
using testing::EdgeArrays;
using testing::ExpectOnlyEntries;
using testing::ReadArrayFile;
using testing::ReadCsc;
using testing::ReadFileBytes;
using testing::ReferenceCsc;
using testing::RunStrata;
using testing::ScratchDir;
using testing::WriteTextFile;
namespace fs = std::filesystem;

// The repository's Cora and CiteSeer arrays as directories of .npy files
// (tests/repository_dataset.h).
std::string Cora() { return testing::RepositoryArrays("cora"); }
std::string Citeseer() { return testing::RepositoryArrays("citeseer"); }

EdgeArrays ReadEdgeIndex(const std::string& path) {
  NpyReader reader(path);
  const uint64_t num_edges = reader.shape().at(1);
  EdgeArrays edges;
  edges.src.resize(num_edges);
  edges.dst.resize(num_edges);
  reader.ReadInt64(0, edges.src);
  reader.ReadInt64(num_edges, edges.dst);
  return edges;
}

void ExpectCscEquals(const Csc& actual, const Csc& expected) {
  EXPECT_EQ(actual.indptr, expected.indptr);
  EXPECT_EQ(actual.indices, expected.indices);
}

void ImportOrFail(const std::vector<std::string>& args) {
  CommandResult r = RunStrata(args);
  ASSERT_EQ(r.exit_status, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;  // quiet in a pipe
}

TEST(ImportCli, ImportsCora) {
  ScratchDir s;
  ImportOrFail({"import", s / "cora", "--npy", Cora()});
  ExpectOnlyEntries(s.path(), {"cora"});
  DatasetMeta meta = Dataset::Open(s / "cora").meta();
  EXPECT_EQ(meta.num_nodes, 2708u);
  EXPECT_EQ(meta.num_edges, 10556u);
  EXPECT_EQ(meta.feature_dim, 1433u);
  EXPECT_EQ(meta.feature_dtype, FeatureDtype::kFloat32);
  EXPECT_EQ(meta.num_classes, 7u);
  EXPECT_EQ(meta.node_id_bytes, 4u);
  EXPECT_EQ(meta.train_size, 140u);
  EXPECT_EQ(meta.val_size, 500u);
  EXPECT_EQ(meta.test_size, 1000u);
  testing::VerifyDataset(Dataset::Open(s / "cora"));

  ExpectCscEquals(ReadCsc(s / "cora"),
                  ReferenceCsc(2708, ReadEdgeIndex(Cora() + "/edge_index.npy"), false, false));

  // Labels and splits are the inputs' values.
  NpyReader labels(Cora() + "/labels.npy");
  std::vector<int64_t> expected_labels(labels.num_elements());
  labels.ReadInt64(0, expected_labels);
  std::vector<int32_t> stored_labels = ReadArrayFile<int32_t>(s / "cora/labels.bin");
  ASSERT_EQ(stored_labels.size(), expected_labels.size());
  for (size_t i = 0; i < stored_labels.size(); ++i) {
    ASSERT_EQ(stored_labels[i], expected_labels[i]) << "node " << i;
  }
  NpyReader train(Cora() + "/train_idx.npy");
  std::vector<int64_t> expected_train(train.num_elements());
  train.ReadInt64(0, expected_train);
  std::vector<uint32_t> stored_train = ReadArrayFile<uint32_t>(s / "cora/split/train.bin");
  ASSERT_EQ(stored_train.size(), expected_train.size());
  for (size_t i = 0; i < stored_train.size(); ++i) EXPECT_EQ(stored_train[i], expected_train[i]);

  // Feature row i sits at i * row_stride_bytes and holds the input's row exactly.
  NpyReader features(Cora() + "/features.npy");
  std::string bytes = ReadFileBytes(s / "cora/features.bin");
  EXPECT_EQ(meta.row_stride_bytes, 8192u);  // 5732 bytes rounded up to whole blocks
  ASSERT_EQ(bytes.size(), 2708 * meta.row_stride_bytes);
  for (uint64_t row : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{2707}}) {
    std::vector<float> expected(1433), stored(1433);
    features.ReadFloat32(row * 1433, expected);
    std::memcpy(stored.data(), bytes.data() + row * meta.row_stride_bytes, 1433 * 4);
    EXPECT_EQ(stored, expected) << "feature row " << row;
  }
}

TEST(ImportCli, ImportsCoraWithSelfLoops) {
  ScratchDir s;
  ImportOrFail({"import", s / "cora", "--npy", Cora(), "--self-loops"});
  DatasetMeta meta = Dataset::Open(s / "cora").meta();
  EXPECT_EQ(meta.num_edges, 10556u + 2708u);
  EXPECT_EQ(meta.in_degree.zero_count, 0u);
  ExpectCscEquals(ReadCsc(s / "cora"),
                  ReferenceCsc(2708, ReadEdgeIndex(Cora() + "/edge_index.npy"), false, true));
}

TEST(ImportCli, KeepsParallelEdgesOfCoraWhenAsked) {
  ScratchDir s;
  ImportOrFail({"import", s / "cora", "--npy", Cora(), "--keep-parallel-edges"});
  DatasetMeta meta = Dataset::Open(s / "cora").meta();
  EXPECT_EQ(meta.num_edges, 10858u);
}

TEST(ImportCli, ImportsCiteseerWithItsSelfLoops) {
  ScratchDir s;
  ImportOrFail({"import", s / "citeseer", "--npy", Citeseer()});
  DatasetMeta meta = Dataset::Open(s / "citeseer").meta();
  EXPECT_EQ(meta.num_nodes, 3327u);
  EXPECT_EQ(meta.num_edges, 9228u);
  EXPECT_EQ(meta.feature_dim, 3703u);
  EXPECT_EQ(meta.num_classes, 6u);
  EXPECT_EQ(meta.train_size, 120u);
  EXPECT_EQ(meta.val_size, 500u);
  EXPECT_EQ(meta.test_size, 1000u);
  EdgeArrays edges = ReadEdgeIndex(Citeseer() + "/edge_index.npy");
  ExpectCscEquals(ReadCsc(s / "citeseer"), ReferenceCsc(3327, edges, false, false));

  // --self-loops adds the identity on top of the existing self loops, without duplicating them.
  ImportOrFail({"import", s / "citeseer-loops", "--npy", Citeseer(), "--self-loops"});
  Csc expected = ReferenceCsc(3327, edges, false, true);
  EXPECT_EQ(Dataset::Open(s / "citeseer-loops").meta().num_edges, expected.indices.size());
  ExpectCscEquals(ReadCsc(s / "citeseer-loops"), expected);
}

// Every file under `a` and `b` (paths relative to each) has the same bytes in the other.
void ExpectSameFiles(const std::string& a, const std::string& b) {
  std::set<std::string> names_a, names_b;
  for (const auto& e : fs::recursive_directory_iterator(a)) {
    if (e.is_regular_file()) names_a.insert(fs::relative(e.path(), a).string());
  }
  for (const auto& e : fs::recursive_directory_iterator(b)) {
    if (e.is_regular_file()) names_b.insert(fs::relative(e.path(), b).string());
  }
  ASSERT_EQ(names_a, names_b);
  for (const std::string& name : names_a) {
    EXPECT_EQ(ReadFileBytes(a + "/" + name), ReadFileBytes(b + "/" + name)) << name;
  }
}

TEST(ImportCli, AnNpzArchiveImportsAsTheDirectoryOfItsMembers) {
  ScratchDir s;
  for (const char* name : {"cora", "citeseer"}) {
    SCOPED_TRACE(name);
    const std::string from_archive = s / (std::string(name) + "-npz");
    const std::string from_directory = s / (std::string(name) + "-npy");
    ImportOrFail({"import", from_archive, "--npy", testing::RepositoryArchive(name)});
    ImportOrFail({"import", from_directory, "--npy", testing::RepositoryArrays(name)});
    ExpectSameFiles(from_archive, from_directory);
  }
}

TEST(ImportCli, AnNpzArchiveWithoutEdgesIsRefusedNamingIt) {
  ScratchDir s;
  const std::string archive = s / "arrays.npz";
  WriteTextFile(archive,
                testing::BuildZip({{.name = "labels.npy",
                                    .data = testing::Npy1d("<i8", std::vector<int64_t>{0, 1})}}));
  CommandResult r = RunStrata({"import", s / "out", "--npy", archive});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("has no member edge_index.npy"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(archive), std::string::npos) << r.err;
  ExpectOnlyEntries(s.path(), {"arrays.npz"});

  WriteTextFile(s / "not-an-archive", "edge_index");
  r = RunStrata({"import", s / "out", "--npy", s / "not-an-archive"});
  EXPECT_EQ(r.exit_status, 2);
  EXPECT_NE(r.err.find("an .npz archive"), std::string::npos) << r.err;
}

TEST(ImportCli, SmallNpyDirectoryMatchesReference) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.num_nodes, testing::kSmallNodes);
  EXPECT_EQ(meta.num_edges, testing::kSmallDistinctEdges);
  EXPECT_EQ(meta.num_classes, 3u);
  EXPECT_EQ(meta.train_size, 2u);
  EXPECT_EQ(meta.val_size, 1u);
  EXPECT_EQ(meta.test_size, 2u);
  ExpectCscEquals(ReadCsc(s / "out"),
                  ReferenceCsc(testing::kSmallNodes, testing::SmallEdges(), false, false));
  EXPECT_EQ(ReadArrayFile<int32_t>(s / "out/labels.bin"),
            (std::vector<int32_t>{0, 1, 2, 0, 1, -1}));
  EXPECT_EQ(ReadArrayFile<uint32_t>(s / "out/split/test.bin"), (std::vector<uint32_t>{3, 4}));
}

TEST(ImportCli, EightByteNodeIdsHoldTheSameGraph) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ImportOrFail({"import", s / "out", "--npy", s / "in", "--node-id-bytes", "8"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.node_id_bytes, 8u);
  EXPECT_EQ(fs::file_size(s / "out/graph/indices.bin"), testing::kSmallDistinctEdges * 8);
  ExpectCscEquals(ReadCsc(s / "out"),
                  ReferenceCsc(testing::kSmallNodes, testing::SmallEdges(), false, false));
  EXPECT_EQ(ReadArrayFile<uint64_t>(s / "out/split/train.bin"), (std::vector<uint64_t>{0, 1}));
}

TEST(ImportCli, Int32EdgeIndexImportsLikeInt64) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  EdgeArrays edges = testing::SmallEdges();
  std::vector<int32_t> flat(edges.src.begin(), edges.src.end());
  flat.insert(flat.end(), edges.dst.begin(), edges.dst.end());
  std::vector<uint64_t> shape = {2, edges.size()};
  WriteNpy(s / "in/edge_index.npy", NpyDtype::kInt32, shape, flat.data());
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  ExpectCscEquals(ReadCsc(s / "out"), ReferenceCsc(testing::kSmallNodes, edges, false, false));
}

TEST(ImportCli, EdgeListWithCommentsTabsBlankLinesAndCrlfMatchesNpy) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  EdgeArrays edges = testing::SmallEdges();
  // The same 20 edges, written every awkward way the format allows.
  std::string text = "# SNAP-style header\n#  FromNodeId\tToNodeId\n\n";
  for (size_t i = 0; i < edges.size(); ++i) {
    std::string a = std::to_string(edges.src[i]), b = std::to_string(edges.dst[i]);
    switch (i % 5) {
      case 0:
        text += a + "\t" + b + "\n";
        break;
      case 1:
        text += "  " + a + "   " + b + "  \r\n";
        break;
      case 2:
        text += a + " " + b + " # trailing comment\n\n";
        break;
      case 3:
        text += a + "\t \t" + b + "\t\r\n# comment line\r\n";
        break;
      default:
        text += a + " " + b + "\n   \n";
        break;
    }
  }
  text += "4 0";  // a last line without a newline
  edges.src.push_back(4);
  edges.dst.push_back(0);
  WriteTextFile(s / "edges.txt", text);
  testing::WriteEdgeIndexNpy(s / "in/edge_index.npy", edges);

  ImportOrFail({"import", s / "from-npy", "--npy", s / "in"});
  ImportOrFail({"import", s / "from-text", "--edge-list", s / "edges.txt", "--features",
                s / "in/features.npy", "--labels", s / "in/labels.npy", "--split", s / "in"});
  for (const char* file : {"graph/indptr.bin", "graph/indices.bin", "features.bin", "labels.bin",
                           "split/train.bin", "split/val.bin", "split/test.bin"}) {
    EXPECT_EQ(ReadFileBytes(s / "from-npy/" + file), ReadFileBytes(s / "from-text/" + file))
        << file;
  }
  DatasetMeta a = Dataset::Open(s / "from-npy").meta(), b = Dataset::Open(s / "from-text").meta();
  EXPECT_EQ(a.num_edges, b.num_edges);
  EXPECT_EQ(a.num_nodes, b.num_nodes);
  EXPECT_TRUE(testing::SameDigests(a, b));
  ExpectCscEquals(ReadCsc(s / "from-text"),
                  ReferenceCsc(testing::kSmallNodes, edges, false, false));
}

TEST(ImportCli, EdgeListAloneTakesNodeCountFromLargestId) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n1 2\n2 9\n");
  ImportOrFail({"import", s / "out", "--edge-list", s / "edges.txt"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.num_nodes, 10u);
  EXPECT_EQ(meta.num_edges, 3u);
  EXPECT_EQ(meta.feature_dim, 0u);
  EXPECT_EQ(meta.num_classes, 0u);
  EXPECT_EQ(meta.in_degree.zero_count, 7u);
  EXPECT_EQ(ReadArrayFile<int32_t>(s / "out/labels.bin"), std::vector<int32_t>(10, -1));
}

TEST(ImportCli, UndirectedDoublesDirectedEdgeList) {
  ScratchDir s;
  // A directed cycle plus chords: no pair appears in both directions, no self loops.
  EdgeArrays edges;
  edges.src = {0, 1, 2, 3, 4, 0, 1};
  edges.dst = {1, 2, 3, 4, 0, 2, 3};
  WriteTextFile(s / "edges.txt", testing::EdgeListText(edges));
  ImportOrFail({"import", s / "directed", "--edge-list", s / "edges.txt"});
  ImportOrFail({"import", s / "undirected", "--edge-list", s / "edges.txt", "--undirected"});
  EXPECT_EQ(Dataset::Open(s / "directed").meta().num_edges, 7u);
  EXPECT_EQ(Dataset::Open(s / "undirected").meta().num_edges, 14u);
  ExpectCscEquals(ReadCsc(s / "undirected"), ReferenceCsc(5, edges, true, false));
  ExpectCscEquals(ReadCsc(s / "directed"), ReferenceCsc(5, edges, false, false));
}

TEST(ImportCli, UndirectedNpyMergesExistingReversePairs) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ImportOrFail({"import", s / "out", "--npy", s / "in", "--undirected", "--self-loops"});
  Csc expected = ReferenceCsc(testing::kSmallNodes, testing::SmallEdges(), true, true);
  EXPECT_EQ(Dataset::Open(s / "out").meta().num_edges, expected.indices.size());
  ExpectCscEquals(ReadCsc(s / "out"), expected);
}

TEST(ImportCli, SmallMemoryBudgetGivesTheSameDataset) {
  // 400k random edges among 50k nodes, with repeats: with --memory-budget 49M the CSC builder
  // gets a 1 MiB buffer and must spill and merge sorted runs.
  ScratchDir s;
  EdgeArrays edges;
  uint64_t state = 12345;
  auto next = [&state] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<int64_t>((state >> 33) % 50000);
  };
  for (int i = 0; i < 400000; ++i) {
    edges.src.push_back(next());
    edges.dst.push_back(i % 10 == 0 && i > 0 ? edges.dst.back() : next());
  }
  edges.src.push_back(49999);
  edges.dst.push_back(0);
  WriteTextFile(s / "edges.txt", testing::EdgeListText(edges));
  ImportOrFail({"import", s / "small", "--edge-list", s / "edges.txt", "--memory-budget", "49M"});
  ImportOrFail({"import", s / "large", "--edge-list", s / "edges.txt", "--memory-budget", "2G"});
  EXPECT_TRUE(
      testing::SameDigests(Dataset::Open(s / "small").meta(), Dataset::Open(s / "large").meta()));
  ExpectCscEquals(ReadCsc(s / "small"), ReferenceCsc(50000, edges, false, false));
}

// Half precision has an 11-bit significand: relative error at most 2^-11 for normal values.
float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float value;
  if (exponent == 0) {
    value = std::ldexp(static_cast<float>(mantissa), -24);
  } else if (exponent == 31) {
    value = mantissa ? NAN : INFINITY;
  } else {
    value = std::ldexp(static_cast<float>(mantissa | 0x400), static_cast<int>(exponent) - 25);
  }
  return sign ? -value : value;
}

TEST(ImportCli, Float16FeaturesRoundTripWithinHalfPrecision) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  const uint64_t rows = testing::kSmallNodes, dim = 5;
  std::vector<float> values;
  for (uint64_t i = 0; i < rows * dim; ++i) {
    values.push_back(std::sin(static_cast<float>(i) * 0.7f) * std::pow(10.0f, (i % 7) - 3.0f));
  }
  values[3] = 0.0f;
  values[4] = 1.0f / 3.0f;
  values[5] = -65504.0f;  // largest half
  testing::WriteFloat32Npy(s / "in/features.npy", {rows, dim}, values);
  ImportOrFail({"import", s / "out", "--npy", s / "in", "--feature-dtype", "float16"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.feature_dtype, FeatureDtype::kFloat16);
  EXPECT_EQ(meta.feature_dim, dim);
  EXPECT_EQ(meta.row_stride_bytes, 16u);  // 10 bytes of row, next power of two
  ASSERT_GE(meta.row_stride_bytes, dim * 2);
  std::string bytes = ReadFileBytes(s / "out/features.bin");
  ASSERT_EQ(bytes.size(), 4096u);  // zero-padded to a whole block
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t b = dim * 2; b < meta.row_stride_bytes; ++b) {
      EXPECT_EQ(bytes[r * meta.row_stride_bytes + b], 0) << "stride padding of row " << r;
    }
  }
  for (uint64_t b = rows * meta.row_stride_bytes; b < bytes.size(); ++b) {
    ASSERT_EQ(bytes[b], 0) << "file padding at byte " << b;
  }
  for (uint64_t r = 0; r < rows; ++r) {
    for (uint64_t c = 0; c < dim; ++c) {
      uint16_t h;
      std::memcpy(&h, bytes.data() + r * meta.row_stride_bytes + c * 2, 2);
      float expected = values[r * dim + c];
      float tolerance = std::max(std::fabs(expected) * 0x1p-11f, 0x1p-24f);
      EXPECT_NEAR(HalfToFloat(h), expected, tolerance) << "row " << r << " column " << c;
    }
  }
}

TEST(ImportCli, Float64FeaturesAreStoredAsFloat32) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  std::vector<double> values;
  for (uint64_t i = 0; i < testing::kSmallNodes * 2; ++i) values.push_back(0.1 * i);
  std::vector<uint64_t> shape = {testing::kSmallNodes, 2};
  WriteNpy(s / "in/features.npy", NpyDtype::kFloat64, shape, values.data());
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.feature_dtype, FeatureDtype::kFloat32);
  std::string bytes = ReadFileBytes(s / "out/features.bin");
  for (uint64_t r = 0; r < testing::kSmallNodes; ++r) {
    float stored[2];
    std::memcpy(stored, bytes.data() + r * meta.row_stride_bytes, sizeof(stored));
    EXPECT_EQ(stored[0], static_cast<float>(values[2 * r]));
    EXPECT_EQ(stored[1], static_cast<float>(values[2 * r + 1]));
  }
}

TEST(ImportCli, LargeEdgeListMatchesNpyAcrossReadBuffers) {
  // ~10 MiB of text, so lines straddle the reader's 8 MiB buffer.
  ScratchDir s;
  EdgeArrays edges;
  for (int64_t i = 0; i < 700000; ++i) {
    edges.src.push_back((i * 7919) % 200000);
    edges.dst.push_back((i * 104729 + 17) % 200000);
  }
  WriteTextFile(s / "edges.txt", testing::EdgeListText(edges));
  fs::create_directory(s / "in");
  testing::WriteEdgeIndexNpy(s / "in/edge_index.npy", edges);
  testing::WriteFloat32Npy(s / "in/features.npy", {200000, 1}, std::vector<float>(200000, 1.0f));
  ImportOrFail({"import", s / "from-npy", "--npy", s / "in"});
  ImportOrFail({"import", s / "from-text", "--edge-list", s / "edges.txt", "--features",
                s / "in/features.npy"});
  EXPECT_TRUE(testing::SameDigests(Dataset::Open(s / "from-npy").meta(),
                                   Dataset::Open(s / "from-text").meta()));
  ExpectCscEquals(ReadCsc(s / "from-text"), ReferenceCsc(200000, edges, false, false));
}

TEST(ImportCli, KeepParallelEdgesStoresEveryRepeat) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ImportOrFail({"import", s / "out", "--npy", s / "in", "--keep-parallel-edges"});
  EdgeArrays edges = testing::SmallEdges();
  EXPECT_EQ(Dataset::Open(s / "out").meta().num_edges, edges.size());
  std::multiset<std::pair<uint64_t, uint64_t>> pairs;  // (dst, src)
  for (size_t i = 0; i < edges.size(); ++i) pairs.insert({edges.dst[i], edges.src[i]});
  Csc expected;
  expected.indptr.assign(testing::kSmallNodes + 1, 0);
  for (const auto& [d, src] : pairs) {
    ++expected.indptr[d + 1];
    expected.indices.push_back(src);
  }
  for (uint64_t v = 0; v < testing::kSmallNodes; ++v) {
    expected.indptr[v + 1] += expected.indptr[v];
  }
  ExpectCscEquals(ReadCsc(s / "out"), expected);
}

TEST(ImportCli, SplitsKeepTheOrderOfTheInput) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/train_idx.npy", {3}, {4, 1, 3});
  fs::remove(s / "in/test_idx.npy");  // a missing split is empty
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  EXPECT_EQ(ReadArrayFile<uint32_t>(s / "out/split/train.bin"), (std::vector<uint32_t>{4, 1, 3}));
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.train_size, 3u);
  EXPECT_EQ(meta.test_size, 0u);
  EXPECT_EQ(fs::file_size(s / "out/split/test.bin"), 0u);
}

TEST(ImportCli, NumClassesIsLargestLabelPlusOne) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  testing::WriteInt64Npy(s / "in/labels.npy", {6}, {-1, 9, 0, -1, 2, 2});
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  EXPECT_EQ(Dataset::Open(s / "out").meta().num_classes, 10u);
  EXPECT_EQ(ReadArrayFile<int32_t>(s / "out/labels.bin"),
            (std::vector<int32_t>{-1, 9, 0, -1, 2, 2}));
}

TEST(ImportCli, NpyFormatVersionsTwoAndThreeAreRead) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ImportOrFail({"import", s / "v1", "--npy", s / "in"});
  EdgeArrays edges = testing::SmallEdges();
  std::vector<int64_t> flat = edges.src;
  flat.insert(flat.end(), edges.dst.begin(), edges.dst.end());
  std::vector<uint64_t> edge_shape = {2, edges.size()},
                        feature_shape = {testing::kSmallNodes, testing::kSmallDim};
  WriteNpy(s / "in/edge_index.npy", NpyDtype::kInt64, edge_shape, flat.data(), 2);
  std::vector<float> features = testing::SmallFeatures();
  WriteNpy(s / "in/features.npy", NpyDtype::kFloat32, feature_shape, features.data(), 3);
  ImportOrFail({"import", s / "v23", "--npy", s / "in"});
  EXPECT_TRUE(
      testing::SameDigests(Dataset::Open(s / "v1").meta(), Dataset::Open(s / "v23").meta()));
}

TEST(ImportCli, EmptyEdgeIndexGivesGraphWithoutEdges) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in", EdgeArrays{});
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.num_nodes, testing::kSmallNodes);
  EXPECT_EQ(meta.num_edges, 0u);
  EXPECT_EQ(meta.in_degree.zero_count, testing::kSmallNodes);
  EXPECT_EQ(ReadArrayFile<uint64_t>(s / "out/graph/indptr.bin"),
            std::vector<uint64_t>(testing::kSmallNodes + 1, 0));
  testing::VerifyDataset(Dataset::Open(s / "out"));
}

TEST(ImportCli, EmptyEdgeListWithFeaturesGivesGraphWithoutEdges) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "# no edges\n\n");
  testing::WriteFloat32Npy(s / "features.npy", {testing::kSmallNodes, testing::kSmallDim},
                           testing::SmallFeatures());
  ImportOrFail(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--features", s / "features.npy"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.num_nodes, testing::kSmallNodes);
  EXPECT_EQ(meta.num_edges, 0u);
}

TEST(ImportCli, OutputPathWithTrailingSlash) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  ImportOrFail({"import", s / "out/", "--npy", s / "in"});
  ExpectOnlyEntries(s.path(), {"in", "out"});
  EXPECT_EQ(Dataset::Open(s / "out").meta().num_edges, testing::kSmallDistinctEdges);
}

TEST(ImportCli, RelativeOutputPathIsCreatedInTheWorkingDirectory) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  CommandResult r = testing::RunProgram(
      {"sh", "-c", "cd \"$1\" && exec \"$2\" import out --npy in", "sh", s.path(), STRATA_BINARY});
  ASSERT_EQ(r.exit_status, 0) << r.err;
  ExpectOnlyEntries(s.path(), {"in", "out"});
  EXPECT_EQ(Dataset::Open(s / "out").meta().num_edges, testing::kSmallDistinctEdges);
}

// ---- sparse features from scipy.sparse.save_npz ----

const std::string kNpzFixtures = STRATA_TEST_FIXTURES "/npz";

// The 4 x 5 matrix of tests/fixtures/npz/make_fixtures.py, as stored CSR.
void ExpectFixtureFeatures(const std::string& dataset) {
  DatasetMeta meta = Dataset::Open(dataset).meta();
  EXPECT_TRUE(meta.sparse_features);
  EXPECT_EQ(meta.feature_dim, 5u);
  EXPECT_EQ(meta.feature_nnz, 7u);
  EXPECT_EQ(ReadArrayFile<uint64_t>(dataset + "/features/indptr.bin"),
            (std::vector<uint64_t>{0, 2, 4, 4, 7}));
  EXPECT_EQ(ReadArrayFile<uint32_t>(dataset + "/features/indices.bin"),
            (std::vector<uint32_t>{1, 4, 0, 3, 1, 2, 4}));
  EXPECT_EQ(ReadArrayFile<float>(dataset + "/features/values.bin"),
            (std::vector<float>{1.5f, -2.0f, 3.0f, 0.25f, 7.0f, 8.0f, 9.5f}));
  testing::VerifyDataset(Dataset::Open(dataset));
}

TEST(ImportCli, EdgeListWithScipyNpzFeaturesStoresThemSparse) {
  for (const std::string fixture : {"csr_float32.npz", "csc_float64.npz"}) {
    SCOPED_TRACE(fixture);
    ScratchDir s;
    WriteTextFile(s / "edges.txt", "0 1\n1 2\n2 3\n");
    ImportOrFail({"import", s / "out", "--edge-list", s / "edges.txt", "--features",
                  kNpzFixtures + "/" + fixture});
    EXPECT_EQ(Dataset::Open(s / "out").meta().num_nodes, 4u);  // the matrix's rows
    ExpectFixtureFeatures(s / "out");
    ExpectOnlyEntries(s.path(), {"edges.txt", "out"});
  }
}

TEST(ImportCli, NpzFeaturesAreToldByTheirMagicWhateverTheirName) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n");
  fs::copy_file(kNpzFixtures + "/csr_float32.npz", s / "features.bin");
  ImportOrFail(
      {"import", s / "out", "--edge-list", s / "edges.txt", "--features", s / "features.bin"});
  ExpectFixtureFeatures(s / "out");
}

TEST(ImportCli, NpyDirectoryTakesFeaturesNpzWhenThereIsNoFeaturesNpy) {
  ScratchDir s;
  testing::WriteSmallNpyDir(s / "in");
  fs::remove(s / "in/features.npy");
  // 6 x 3, CSC, row 5 empty: rows as {column: value} are 0: {0: 1}, 1: {2: 2}, 2: {0: 3, 1: 4},
  // 3: {1: 5}, 4: {2: 6}.
  testing::SparseArrays m{.format = "csc",
                          .rows = 6,
                          .cols = 3,
                          .indptr = {0, 2, 4, 6},
                          .indices = {0, 2, 2, 3, 1, 4},
                          .data = {1, 3, 4, 5, 2, 6}};
  WriteTextFile(s / "in/features.npz", testing::BuildZip(testing::SparseNpzEntries(m)));
  ImportOrFail({"import", s / "out", "--npy", s / "in"});
  DatasetMeta meta = Dataset::Open(s / "out").meta();
  EXPECT_EQ(meta.num_nodes, testing::kSmallNodes);
  EXPECT_EQ(meta.num_edges, testing::kSmallDistinctEdges);
  EXPECT_EQ(meta.feature_dim, 3u);
  EXPECT_EQ(ReadArrayFile<uint64_t>(s / "out/features/indptr.bin"),
            (std::vector<uint64_t>{0, 1, 2, 4, 5, 6, 6}));
  EXPECT_EQ(ReadArrayFile<uint32_t>(s / "out/features/indices.bin"),
            (std::vector<uint32_t>{0, 2, 0, 1, 1, 2}));
  EXPECT_EQ(ReadArrayFile<float>(s / "out/features/values.bin"),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(ReadArrayFile<int32_t>(s / "out/labels.bin"),
            (std::vector<int32_t>{0, 1, 2, 0, 1, -1}));
  testing::VerifyDataset(Dataset::Open(s / "out"));
}

TEST(ImportCli, RefusesFloat16ForSparseFeatures) {
  ScratchDir s;
  WriteTextFile(s / "edges.txt", "0 1\n");
  CommandResult r = RunStrata({"import", s / "out", "--edge-list", s / "edges.txt", "--features",
                               kNpzFixtures + "/csr_float32.npz", "--feature-dtype", "float16"});
  testing::ExpectInputError(r, {"csr_float32.npz", "float16"});
  ExpectOnlyEntries(s.path(), {"edges.txt"});
}

TEST(ImportCli, RefusesBadNpzAndLeavesNothingBehind) {
  testing::SparseArrays m{
      .rows = 2, .cols = 3, .indptr = {0, 2, 3}, .indices = {0, 1, 7}, .data = {1, 2, 3}};
  const std::string good = testing::BuildZip(testing::SparseNpzEntries(m));
  m.format = "coo";
  const std::string coo = testing::BuildZip(testing::SparseNpzEntries(m));
  for (const auto& [bytes, fragment] : std::vector<std::pair<std::string, std::string>>{
           {good, "x.npz:indices.npy element [2]"},
           {coo, "'coo'"},
           {good.substr(0, good.size() - 30), "no end of central directory record"},
           {"PK\x03\x04 not really", "not a ZIP archive"}}) {
    SCOPED_TRACE(fragment);
    ScratchDir s;
    WriteTextFile(s / "edges.txt", "0 1\n");
    WriteTextFile(s / "x.npz", bytes);
    CommandResult r =
        RunStrata({"import", s / "out", "--edge-list", s / "edges.txt", "--features", s / "x.npz"});
    testing::ExpectInputError(r, {"x.npz", fragment});
    ExpectOnlyEntries(s.path(), {"edges.txt", "x.npz"});
  }
}

}  // namespace
}  // namespace strata
