// `strata import --ogb` on small OGB directories written here, in both forms: the dataset
// equals `--npy`'s of the same arrays file for file, and each kind of bad input is one input
// error naming the file (and line) with nothing published.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/float16.h"
#include "storage/gzip_stream.h"
#include "storage/zip_builder.h"
#include "strata/dataset.h"
#include "strata/error.h"
#include "strata/import.h"
#include "strata/npy.h"
#include "test_util.h"

namespace strata {
namespace {

namespace fs = std::filesystem;
using testing::BuildZip;
using testing::NpyBytes;
using testing::RawBytes;
using testing::ScratchDir;

// One gzip member holding `text`.
std::string Gzip(const std::string& text) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
}

// A small graph with what OGB's graphs have: parallel edges, self loops, isolated nodes,
// unlabeled nodes (outside every split), and float features.
struct Arrays {
  uint64_t nodes = 60;
  std::vector<int64_t> src, dst;
  uint64_t dim = 5;
  std::vector<float> features;
  std::vector<int64_t> labels;  // -1: unlabeled (NaN in OGB)
  std::vector<int64_t> train, valid, test;

  Arrays() {
    std::mt19937_64 rng(7);
    for (int e = 0; e < 300; ++e) {
      src.push_back(static_cast<int64_t>(rng() % (nodes - 5)));
      dst.push_back(static_cast<int64_t>(rng() % (nodes - 5)));
    }
    src.push_back(3), dst.push_back(3);
    src.push_back(src[0]), dst.push_back(dst[0]);
    std::normal_distribution<float> normal;
    for (uint64_t i = 0; i < nodes * dim; ++i) features.push_back(normal(rng));
    features[7] = 1e-42f;  // a subnormal survives the text form
    for (uint64_t v = 0; v < nodes; ++v) {
      labels.push_back(v % 9 == 4 ? -1 : static_cast<int64_t>(rng() % 7));
      if (labels.back() < 0) continue;
      (v % 5 < 3 ? train : v % 5 == 3 ? valid : test).push_back(static_cast<int64_t>(v));
    }
  }
};

std::string Lines(const std::vector<int64_t>& values) {
  std::string text;
  for (int64_t v : values) text += fmt::format("{}\n", v);
  return text;
}

void WriteSplit(const std::string& dir, const Arrays& a, const std::string& name = "time") {
  WriteFile(dir + "/split/" + name + "/train.csv.gz", Gzip(Lines(a.train)));
  WriteFile(dir + "/split/" + name + "/valid.csv.gz", Gzip(Lines(a.valid)));
  WriteFile(dir + "/split/" + name + "/test.csv.gz", Gzip(Lines(a.test)));
}

std::string LabelText(const Arrays& a) {
  std::string text;
  for (int64_t l : a.labels) text += l < 0 ? "nan\n" : fmt::format("{}\n", l);
  return text;
}

void WriteTextForm(const std::string& dir, const Arrays& a) {
  std::string edges;
  for (size_t e = 0; e < a.src.size(); ++e) edges += fmt::format("{},{}\n", a.src[e], a.dst[e]);
  std::string features;
  for (uint64_t v = 0; v < a.nodes; ++v) {
    for (uint64_t k = 0; k < a.dim; ++k) {
      features += fmt::format("{}{}", k ? "," : "", a.features[v * a.dim + k]);
    }
    features += '\n';
  }
  WriteFile(dir + "/raw/edge.csv.gz", Gzip(edges));
  WriteFile(dir + "/raw/num-node-list.csv.gz", Gzip(fmt::format("{}\n", a.nodes)));
  WriteFile(dir + "/raw/num-edge-list.csv.gz", Gzip(fmt::format("{}\n", a.src.size())));
  WriteFile(dir + "/raw/node-feat.csv.gz", Gzip(features));
  WriteFile(dir + "/raw/node-label.csv.gz", Gzip(LabelText(a)));
  WriteSplit(dir, a);
}

std::string EdgeIndexNpy(const Arrays& a) {
  std::vector<int64_t> both = a.src;
  both.insert(both.end(), a.dst.begin(), a.dst.end());
  return NpyBytes("<i8", fmt::format("(2, {})", a.src.size()), RawBytes(both));
}

// ogbn-papers100M's form; node_feat as float16 when `half`.
void WriteBinaryForm(const std::string& dir, const Arrays& a, bool half) {
  std::string feat;
  if (half) {
    std::vector<uint16_t> h;
    for (float f : a.features) h.push_back(FloatToHalf(f));
    feat = NpyBytes("<f2", fmt::format("({}, {})", a.nodes, a.dim), RawBytes(h));
  } else {
    feat = NpyBytes("<f4", fmt::format("({}, {})", a.nodes, a.dim), RawBytes(a.features));
  }
  WriteFile(
      dir + "/raw/data.npz",
      BuildZip({{.name = "edge_index.npy", .data = EdgeIndexNpy(a)},
                {.name = "edge_feat.npy", .data = NpyBytes("<f4", "(0,)", "")},
                {.name = "node_feat.npy", .data = feat},
                {.name = "node_year.npy", .data = NpyBytes("<i8", "(0,)", "")},
                {.name = "num_nodes_list.npy",
                 .data = testing::Npy1d("<i8", std::vector<int64_t>{int64_t(a.nodes)})},
                {.name = "num_edges_list.npy",
                 .data = testing::Npy1d("<i8", std::vector<int64_t>{int64_t(a.src.size())})}}));
  std::vector<double> labels;
  for (int64_t l : a.labels) {
    labels.push_back(l < 0 ? std::numeric_limits<double>::quiet_NaN() : static_cast<double>(l));
  }
  WriteFile(
      dir + "/raw/node-label.npz",
      BuildZip({{.name = "node_label.npy",
                 .data = NpyBytes("<f8", fmt::format("({}, 1)", a.nodes), RawBytes(labels))}}));
  WriteSplit(dir, a);
}

// The same arrays as --npy takes them; features as float16 when `half` (as the binary form).
void WriteNpyForm(const std::string& dir, const Arrays& a, bool half) {
  fs::create_directories(dir);
  WriteFile(dir + "/edge_index.npy", EdgeIndexNpy(a));
  if (half) {
    std::vector<uint16_t> h;
    for (float f : a.features) h.push_back(FloatToHalf(f));
    WriteFile(dir + "/features.npy",
              NpyBytes("<f2", fmt::format("({}, {})", a.nodes, a.dim), RawBytes(h)));
  } else {
    WriteFile(dir + "/features.npy",
              NpyBytes("<f4", fmt::format("({}, {})", a.nodes, a.dim), RawBytes(a.features)));
  }
  WriteFile(dir + "/labels.npy", testing::Npy1d("<i8", a.labels));
  WriteFile(dir + "/train_idx.npy", testing::Npy1d("<i8", a.train));
  WriteFile(dir + "/val_idx.npy", testing::Npy1d("<i8", a.valid));
  WriteFile(dir + "/test_idx.npy", testing::Npy1d("<i8", a.test));
}

ImportOptions Options(const std::string& out) {
  ImportOptions o;
  o.out = out;
  o.memory_budget_bytes = uint64_t{256} << 20;
  return o;
}

void ExpectSameDataset(const std::string& a, const std::string& b) {
  const DatasetMeta x = Dataset::Open(a).meta(), y = Dataset::Open(b).meta();
  EXPECT_EQ(x.num_nodes, y.num_nodes);
  EXPECT_EQ(x.num_edges, y.num_edges);
  EXPECT_EQ(x.num_classes, y.num_classes);
  EXPECT_EQ(x.feature_dim, y.feature_dim);
  EXPECT_EQ(x.train_size, y.train_size);
  EXPECT_EQ(x.val_size, y.val_size);
  EXPECT_EQ(x.test_size, y.test_size);
  ASSERT_EQ(x.files.size(), y.files.size());
  for (const auto& [name, digest] : x.files) {
    ASSERT_TRUE(y.files.count(name)) << name;
    EXPECT_EQ(digest.xxh64, y.files.at(name).xxh64) << name;
    EXPECT_EQ(digest.bytes, y.files.at(name).bytes) << name;
  }
}

struct Variant {
  bool undirected;
  FeatureDtype dtype;
};

class OgbImport : public ::testing::TestWithParam<Variant> {
 protected:
  ImportOptions VariantOptions(const std::string& out) const {
    ImportOptions o = Options(out);
    o.undirected = GetParam().undirected;
    o.feature_dtype = GetParam().dtype;
    return o;
  }
  ScratchDir dir_;
  Arrays arrays_;
};

TEST_P(OgbImport, TextFormEqualsTheNpyImport) {
  WriteTextForm(dir_ / "ogbn-x", arrays_);
  WriteNpyForm(dir_ / "npy", arrays_, false);
  const DatasetMeta meta = ImportOgbDirectory(dir_ / "ogbn-x", "", VariantOptions(dir_ / "a"));
  ImportNpyDirectory(dir_ / "npy", VariantOptions(dir_ / "b"));
  ExpectSameDataset(dir_ / "a", dir_ / "b");
  EXPECT_EQ(meta.num_classes, 7u);
  EXPECT_EQ(meta.train_size, arrays_.train.size());
}

TEST_P(OgbImport, BinaryFormEqualsTheNpyImport) {
  for (bool half : {false, true}) {
    WriteBinaryForm(dir_ / "ogbn-y", arrays_, half);
    WriteNpyForm(dir_ / "npy", arrays_, half);
    ImportOptions a = VariantOptions(dir_ / "a"), b = VariantOptions(dir_ / "b");
    a.replace_existing = b.replace_existing = true;
    ImportOgbDirectory(dir_ / "ogbn-y", "", a);
    ImportNpyDirectory(dir_ / "npy", b);
    ExpectSameDataset(dir_ / "a", dir_ / "b");
  }
}

INSTANTIATE_TEST_SUITE_P(Options, OgbImport,
                         ::testing::Values(Variant{false, FeatureDtype::kFloat32},
                                           Variant{true, FeatureDtype::kFloat16}));

// Imports a text-form directory after `spoil` changed it; returns the error's message and
// checks that nothing was published.
template <typename Spoil>
std::string TextFormError(Spoil spoil, const std::string& split = "") {
  ScratchDir dir;
  WriteTextForm(dir / "ogbn-x", Arrays());
  spoil(dir / "ogbn-x");
  try {
    ImportOgbDirectory(dir / "ogbn-x", split, Options(dir / "out"));
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput) << e.what();
    EXPECT_FALSE(fs::exists(dir / "out"));
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return "";
}

TEST(OgbImportErrors, EachBadInputIsOneLineNamingTheFileAndLine) {
  // Errors read "what (file:position)".
  auto has = [](const std::string& message, const std::string& what, const std::string& where) {
    EXPECT_EQ(message.rfind(what, 0), 0u) << message;
    EXPECT_NE(message.find(where + ")"), std::string::npos) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  };
  has(TextFormError([](const std::string& d) {
        std::string gz = Gzip(std::string(5000, '1') + "\n");
        WriteFile(d + "/raw/edge.csv.gz", gz.substr(0, gz.size() / 2));
      }),
      "truncated", "edge.csv.gz");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/edge.csv.gz", Gzip("0,1\n1,2,3\n")); }),
      "expected 2 comma-separated node ids, found 3 fields", "edge.csv.gz:line 2");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/edge.csv.gz", Gzip("0,1\n60,2\n")); }),
      "node id 60 is >= num_nodes 60", "edge.csv.gz:line 2");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/edge.csv.gz", Gzip("0,1\n-1,2\n")); }),
      "node id -1 is negative", "edge.csv.gz:line 2");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/num-edge-list.csv.gz", Gzip("7\n")); }),
      "holds 302 edges, but num-edge-list says 7", "edge.csv.gz");
  has(TextFormError([](const std::string& d) {
        WriteFile(d + "/raw/num-node-list.csv.gz", Gzip("60\n60\n"));
      }),
      "lists several graphs", "num-node-list.csv.gz");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/node-feat.csv.gz", Gzip("1,2\n3,x\n")); }),
      "expected a number, found 'x'", "node-feat.csv.gz:line 2");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/node-feat.csv.gz", Gzip("1,2\n3,4\n")); }),
      "holds 2 feature rows, but num-node-list says 60 nodes", "node-feat.csv.gz");
  has(TextFormError([](const std::string& d) {
        WriteFile(d + "/raw/node-label.csv.gz", Gzip("1,0\n0,1\n"));
      }),
      "has 2 labels a node (a multi-task dataset)", "node-label.csv.gz:line 1");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/raw/node-label.csv.gz", Gzip("1\n2.5\n")); }),
      "label 2.5 is not a class id", "node-label.csv.gz:line 2");
  has(TextFormError([](const std::string& d) {
        WriteFile(d + "/split/time/valid.csv.gz", Gzip("4\n"));  // node 4 is unlabeled
      }),
      "node id 4 has no label", "valid.csv.gz:line 1");
  has(TextFormError(
          [](const std::string& d) { WriteFile(d + "/split/time/test.csv.gz", Gzip("0\n0\n")); }),
      "node id 0 appears twice", "test.csv.gz:line 1");  // node 0 is a training node too
  has(TextFormError([](const std::string& d) { WriteSplit(d, Arrays(), "random"); }),
      "holds 2 splits (random, time): name one with --ogb-split", "split");
  has(TextFormError([](const std::string&) {}, "species"), "no split named 'species'", "split");
  has(TextFormError([](const std::string& d) { fs::remove(d + "/raw/edge.csv.gz"); }),
      "holds neither raw/edge.csv.gz nor raw/data.npz", "ogbn-x");
}

TEST(OgbImportSplit, NamedSplitIsTheOneImported) {
  ScratchDir dir;
  Arrays a;
  WriteTextForm(dir / "ogbn-x", a);
  Arrays other = a;
  other.train.resize(3);
  WriteSplit(dir / "ogbn-x", other, "small");
  EXPECT_EQ(ImportOgbDirectory(dir / "ogbn-x", "small", Options(dir / "s")).train_size, 3u);
  EXPECT_EQ(ImportOgbDirectory(dir / "ogbn-x", "time", Options(dir / "t")).train_size,
            a.train.size());
}

TEST(OgbImportLabels, MultiTaskBinaryLabelsAreRefused) {
  ScratchDir dir;
  Arrays a;
  WriteBinaryForm(dir / "ogbn-p", a, false);
  WriteFile(dir / "ogbn-p/raw/node-label.npz",
            BuildZip({{.name = "node_label.npy",
                       .data = NpyBytes("<f4", fmt::format("({}, 2)", a.nodes),
                                        std::string(a.nodes * 8, '\0'))}}));
  try {
    ImportOgbDirectory(dir / "ogbn-p", "", Options(dir / "out"));
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("has 2 labels a node", 0), 0u) << e.what();
    EXPECT_NE(std::string(e.what()).find("node-label.npz:node_label.npy)"), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// Concatenated gzip members read as one stream; a file without gzip's magic passes through.
TEST(GzipStream, ReadsConcatenatedMembersAndPlainFiles) {
  ScratchDir dir;
  WriteFile(dir / "two.gz", Gzip("first\n") + Gzip("second\n"));
  WriteFile(dir / "plain.csv", "1,2\n");
  for (const auto& [name, expected] :
       {std::pair<std::string, std::string>{"two.gz", "first\nsecond\n"}, {"plain.csv", "1,2\n"}}) {
    GzipStream stream(dir / name);
    std::string text;
    char buffer[3];
    while (size_t got = stream.Read(buffer, sizeof(buffer))) text.append(buffer, got);
    EXPECT_EQ(text, expected);
  }
}

}  // namespace
}  // namespace strata
