#include "dataset/npz_features.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cli/cli_test_helpers.h"
#include "dataset/dataset_writer.h"
#include "storage/file.h"
#include "storage/zip_builder.h"
#include "strata/error.h"
#include "test_util.h"

namespace strata {
namespace {

using testing::BuildZip;
using testing::Npy1d;
using testing::NpyBytes;
using testing::ReadArrayFile;
using testing::ScratchDir;
using testing::SparseArrays;
using testing::SparseNpzEntries;
using testing::WriteTextFile;
using testing::ZipEntry;

const std::string kFixtures = STRATA_TEST_FIXTURES "/npz";

struct Csr {
  std::vector<uint64_t> indptr;
  std::vector<uint32_t> indices;
  std::vector<float> values;
  bool operator==(const Csr&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Csr& csr) {
  out << "indptr";
  for (uint64_t v : csr.indptr) out << " " << v;
  out << "; indices";
  for (uint32_t v : csr.indices) out << " " << v;
  out << "; values";
  for (float v : csr.values) out << " " << v;
  return out;
}

// Imports `npz` into a staging dataset (never published) and reads back its CSR files.
Csr ImportNpz(const std::string& npz, DatasetMeta* meta = nullptr,
              uint64_t budget_bytes = uint64_t{256} << 20) {
  ScratchDir dir;
  DatasetWriter writer(dir / "out", false);
  MemoryBudget budget(budget_bytes);
  NpzFeatures features(npz, writer.spill_dir());
  features.Import(budget, writer);
  if (meta != nullptr) *meta = writer.meta();
  return {ReadArrayFile<uint64_t>(writer.PathOf(kSparseIndptrFile)),
          ReadArrayFile<uint32_t>(writer.PathOf(kSparseIndicesFile)),
          ReadArrayFile<float>(writer.PathOf(kSparseValuesFile))};
}

// The 4 x 5 matrix of tests/fixtures/npz/make_fixtures.py.
Csr FixtureMatrix() {
  return {{0, 2, 4, 4, 7}, {1, 4, 0, 3, 1, 2, 4}, {1.5f, -2.0f, 3.0f, 0.25f, 7.0f, 8.0f, 9.5f}};
}

std::string WriteNpz(const ScratchDir& dir, const std::vector<ZipEntry>& entries,
                     bool zip64_end = false) {
  const std::string path = dir / "x.npz";
  WriteTextFile(path, BuildZip(entries, zip64_end));
  return path;
}

// A 3 x 4 CSC matrix whose columns list rows unsorted and repeated:
//   column 0: rows 2, 0   column 1: -   column 2: rows 1, 2, 1   column 3: row 0
// as rows: row 0 = {0: 1, 3: 6}, row 1 = {2: 3 + 5}, row 2 = {0: 2, 2: 4}.
SparseArrays CscWithRepeats() {
  return {.format = "csc",
          .rows = 3,
          .cols = 4,
          .indptr = {0, 2, 2, 5, 6},
          .indices = {2, 0, 1, 2, 1, 0},
          .data = {2, 1, 3, 4, 5, 6}};
}
const Csr kCscWithRepeatsAsRows = {{0, 2, 3, 5}, {0, 3, 2, 0, 2}, {1, 6, 8, 2, 4}};

// Expects opening or importing `entries` as x.npz to fail with an input error naming the
// archive and containing every fragment.
void ExpectRefused(const std::vector<ZipEntry>& entries, const std::vector<std::string>& fragments,
                   uint64_t budget_bytes = uint64_t{256} << 20) {
  ScratchDir dir;
  const std::string path = WriteNpz(dir, entries);
  try {
    ImportNpz(path, nullptr, budget_bytes);
    ADD_FAILURE() << "no error; expected " << fragments.at(0);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput) << e.what();
    const std::string message = e.what();
    EXPECT_NE(message.find(path), std::string::npos) << message;
    for (const std::string& fragment : fragments) {
      EXPECT_NE(message.find(fragment), std::string::npos) << message;
    }
  }
}

std::vector<ZipEntry> Replace(std::vector<ZipEntry> entries, const std::string& name,
                              const std::string& data) {
  for (ZipEntry& e : entries) {
    if (e.name == name) e.data = data;
  }
  return entries;
}

TEST(NpzFeatures, ImportsScipyCsrFixture) {
  DatasetMeta meta;
  EXPECT_EQ(ImportNpz(kFixtures + "/csr_float32.npz", &meta), FixtureMatrix());
  EXPECT_TRUE(meta.sparse_features);
  EXPECT_EQ(meta.feature_nnz, 7u);
  EXPECT_EQ(meta.feature_dim, 5u);
  EXPECT_EQ(meta.feature_dtype, FeatureDtype::kFloat32);
  EXPECT_EQ(meta.row_stride_bytes, 32u);
  EXPECT_EQ(meta.minor_version, 2);
  EXPECT_EQ(meta.files.count(std::string(kSparseValuesFile)), 1u);
}

TEST(NpzFeatures, ImportsScipyCscFixtureAsTheSameRows) {
  EXPECT_EQ(ImportNpz(kFixtures + "/csc_float64.npz"), FixtureMatrix());
}

TEST(NpzFeatures, SortsAndSumsRepeatedColumnsOfScipyFixture) {
  EXPECT_EQ(ImportNpz(kFixtures + "/csr_unsorted_repeats.npz"),
            (Csr{{0, 2, 4}, {1, 4, 0, 3}, {2.0f, 1.5f, 3.0f, 4.0f}}));
}

TEST(NpzFeatures, TransposesCscWithUnsortedAndRepeatedRows) {
  ScratchDir dir;
  EXPECT_EQ(ImportNpz(WriteNpz(dir, SparseNpzEntries(CscWithRepeats()))), kCscWithRepeatsAsRows);
}

TEST(NpzFeatures, ReadsZip64EntriesAndUnicodeFormat) {
  ScratchDir dir;
  std::vector<ZipEntry> entries = SparseNpzEntries(CscWithRepeats());
  for (ZipEntry& e : entries) e.zip64 = true;
  entries[3].descriptor = true;
  // NumPy >= 2 saves a str as '<U3': UCS-4 code units.
  const std::string ucs4("c\0\0\0s\0\0\0c\0\0\0", 12);
  entries = Replace(entries, "format.npy", NpyBytes("<U3", "()", ucs4));
  EXPECT_EQ(ImportNpz(WriteNpz(dir, entries, /*zip64_end=*/true)), kCscWithRepeatsAsRows);
}

TEST(NpzFeatures, ConvertsIntegerBoolAndFloat16Data) {
  SparseArrays m{.rows = 1, .cols = 3, .indptr = {0, 2}, .indices = {0, 2}, .data = {0, 0}};
  for (const auto& [data, expected] : std::vector<std::pair<std::string, std::vector<float>>>{
           {Npy1d("<i8", std::vector<int64_t>{-3, 70000}), {-3.0f, 70000.0f}},
           {Npy1d("|b1", std::vector<uint8_t>{1, 0}), {1.0f, 0.0f}},
           {Npy1d("<f2", std::vector<uint16_t>{0x3c00, 0xc000}), {1.0f, -2.0f}},
           {Npy1d("<f8", std::vector<double>{0.1, 1e30}), {0.1f, 1e30f}}}) {
    ScratchDir dir;
    Csr csr = ImportNpz(WriteNpz(dir, Replace(SparseNpzEntries(m), "data.npy", data)));
    EXPECT_EQ(csr.indices, (std::vector<uint32_t>{0, 2}));
    EXPECT_EQ(csr.values, expected);
  }
}

// A value float32 cannot hold would be stored as infinity and train to a loss of NaN.
TEST(NpzFeatures, RefusesValuesThatAreNotFiniteAsFloat32) {
  SparseArrays m{.rows = 1, .cols = 3, .indptr = {0, 2}, .indices = {0, 2}, .data = {0, 0}};
  for (const double bad : {1e300, static_cast<double>(NAN)}) {
    ScratchDir dir;
    const std::string npz = WriteNpz(
        dir, Replace(SparseNpzEntries(m), "data.npy", Npy1d("<f8", std::vector<double>{0.1, bad})));
    try {
      ImportNpz(npz);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), Error::Kind::kInput);
      EXPECT_NE(std::string(e.what()).find("row 0, column 2"), std::string::npos) << e.what();
    }
  }
}

// More values than one read buffer (2^20), one row longer than that alone, rows unsorted.
TEST(NpzFeatures, StreamsRowsAcrossReadBuffers) {
  SparseArrays m{.rows = 2001, .cols = 1300000};
  std::vector<std::map<uint32_t, float>> rows(m.rows);
  m.indptr.push_back(0);
  for (int64_t r = 0; r < m.rows; ++r) {
    const int32_t length = r == 1 ? 1200000 : 250;
    for (int32_t k = 0; k < length; ++k) {
      const auto column = static_cast<int32_t>((int64_t{k} * 7919 + r) % m.cols);
      const float value = static_cast<float>(k % 13 + 1);
      m.indices.push_back(column);
      m.data.push_back(value);
      rows[r][column] += value;
    }
    m.indptr.push_back(static_cast<int32_t>(m.indices.size()));
  }
  Csr expected;
  expected.indptr.push_back(0);
  for (const auto& row : rows) {
    for (const auto& [column, value] : row) {
      expected.indices.push_back(column);
      expected.values.push_back(value);
    }
    expected.indptr.push_back(expected.indices.size());
  }
  std::vector<ZipEntry> entries = SparseNpzEntries(m);
  for (ZipEntry& e : entries) e.deflate = false;  // fast to build; deflate is tested above
  ScratchDir dir;
  EXPECT_TRUE(ImportNpz(WriteNpz(dir, entries)) == expected);
  m.format = "csc";
  std::swap(m.rows, m.cols);
  // As CSC the same arrays are the transpose; compare one column of it: row 5's entries.
  entries = SparseNpzEntries(m);
  for (ZipEntry& e : entries) e.deflate = false;
  DatasetMeta meta;
  Csr transposed = ImportNpz(WriteNpz(dir, entries), &meta);
  EXPECT_EQ(meta.feature_dim, 2001u);
  EXPECT_EQ(transposed.indptr.size(), 1300001u);
  EXPECT_EQ(meta.feature_nnz, expected.indices.size());
}

TEST(NpzFeatures, RefusesOtherFormats) {
  for (const std::string format : {"coo", "bsr", "dia"}) {
    SparseArrays m = CscWithRepeats();
    m.format = format;
    ExpectRefused(SparseNpzEntries(m), {"'" + format + "'", "format.npy"});
  }
  ExpectRefused(Replace(SparseNpzEntries(CscWithRepeats()), "format.npy",
                        Npy1d("<i8", std::vector<int64_t>{1})),
                {"format.npy", "expected a string array"});
}

TEST(NpzFeatures, RefusesMissingMembers) {
  for (const std::string name :
       {"indices.npy", "indptr.npy", "format.npy", "shape.npy", "data.npy"}) {
    std::vector<ZipEntry> entries = SparseNpzEntries(CscWithRepeats());
    std::erase_if(entries, [&](const ZipEntry& e) { return e.name == name; });
    ExpectRefused(entries, {"no member " + name});
  }
}

TEST(NpzFeatures, RefusesMemberThatIsNotNpy) {
  ExpectRefused(Replace(SparseNpzEntries(CscWithRepeats()), "data.npy", "not an array"),
                {"x.npz:data.npy", "not a .npy file"});
  ExpectRefused(Replace(SparseNpzEntries(CscWithRepeats()), "data.npy",
                        NpyBytes("<c8", "(6,)", std::string(48, '\0'))),
                {"x.npz:data.npy", "dtype '<c8' is not supported"});
}

TEST(NpzFeatures, RefusesBadShapes) {
  const auto entries = SparseNpzEntries(CscWithRepeats());
  ExpectRefused(Replace(entries, "shape.npy", Npy1d("<i8", std::vector<int64_t>{3, 4, 5})),
                {"x.npz:shape.npy", "two integers"});
  ExpectRefused(Replace(entries, "shape.npy", Npy1d("<i8", std::vector<int64_t>{3, -4})),
                {"shape.npy", "negative"});
  // A CSC matrix's rows are not tied to any array's length; 2^61 of them once made the
  // transpose's size wrap around.
  ExpectRefused(
      Replace(entries, "shape.npy", Npy1d("<i8", std::vector<int64_t>{int64_t{1} << 61, 4})),
      {"shape.npy", "more than the 2^48 nodes"});
  ExpectRefused(Replace(entries, "indptr.npy", Npy1d("<i4", std::vector<int32_t>{0, 2, 5, 6})),
                {"x.npz:indptr.npy", "indptr has 4 elements", "4 + 1"});
  ExpectRefused(Replace(entries, "data.npy", Npy1d("<f4", std::vector<float>{1, 2})),
                {"x.npz:data.npy", "data has 2 elements and indices 6"});
  ExpectRefused(Replace(entries, "indices.npy", NpyBytes("<i4", "(2, 3)", std::string(24, '\0'))),
                {"x.npz:indices.npy", "expected a 1-D integer array"});
}

TEST(NpzFeatures, RefusesIndicesOutOfRange) {
  SparseArrays csr{
      .rows = 2, .cols = 3, .indptr = {0, 2, 3}, .indices = {0, 3, 1}, .data = {1, 2, 3}};
  ExpectRefused(SparseNpzEntries(csr),
                {"column 3 in row 0 is outside the matrix's 3 columns", "indices.npy element [1]"});
  csr.indices = {0, 1, -1};
  ExpectRefused(SparseNpzEntries(csr), {"column -1 in row 1", "indices.npy element [2]"});
  SparseArrays csc = CscWithRepeats();
  csc.indices[4] = 3;
  ExpectRefused(SparseNpzEntries(csc),
                {"row 3 is outside the matrix's 3 rows", "indices.npy element [4]"});
}

TEST(NpzFeatures, RefusesBadIndptr) {
  SparseArrays m = CscWithRepeats();
  m.indptr = {0, 2, 1, 5, 6};
  ExpectRefused(SparseNpzEntries(m), {"indptr decreases from 2 to 1", "indptr.npy element [2]"});
  m.indptr = {1, 2, 2, 5, 6};
  ExpectRefused(SparseNpzEntries(m), {"indptr starts at 1, not 0"});
  m.indptr = {0, 2, 2, 5, 5};
  ExpectRefused(SparseNpzEntries(m), {"indptr ends at 5", "hold 6 values"});
  m.indptr = {0, 2, 9, 9, 6};
  ExpectRefused(SparseNpzEntries(m), {"indptr 9 is past the 6 stored values"});
}

TEST(NpzFeatures, RefusesCscTransposeBeyondTheBudget) {
  ExpectRefused(SparseNpzEntries(CscWithRepeats()),
                {"transposing this CSC matrix", "--memory-budget", "x.tocsr()"},
                /*budget_bytes=*/uint64_t{12} << 20);
}

TEST(NpzFeatures, RefusesDamagedArchive) {
  ScratchDir dir;
  const std::string zip = BuildZip(SparseNpzEntries(CscWithRepeats()));
  WriteTextFile(dir / "x.npz", zip.substr(0, zip.size() / 2));
  try {
    ImportNpz(dir / "x.npz");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no end of central directory record"), std::string::npos)
        << e.what();
  }
  std::vector<ZipEntry> entries = SparseNpzEntries(CscWithRepeats());
  entries[4].crc_delta = 1;
  ExpectRefused(entries, {"bad CRC-32", "x.npz:data.npy"});
}

}  // namespace
}  // namespace strata
