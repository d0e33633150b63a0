// Fuzzes a dataset read back from disk: each input is a list of patches to the files of a small
// generated dataset and of its partitioned copy (any file, meta.json included), and the
// patched datasets are then verified, trained on (memory and on-disk topology, the full graph,
// multistage partition), partitioned and exported. Every reader must refuse what it cannot use
// with an input error; nothing may crash, hang or fail otherwise. The patches leave the
// checksums in meta.json as they were: only `Verify` reads every byte, and the readers must not
// depend on it.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "dataset/edge_list_export.h"
#include "fuzz_support.h"
#include "strata/dataset.h"
#include "strata/generate.h"
#include "strata/partition.h"
#include "strata/train.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// The files an input may patch, relative to the dataset ("partition/" ones to the partitioned
// copy); an input's patch names one by its index modulo the count.
const char* const kFiles[] = {"meta.json",
                              "graph/indptr.bin",
                              "graph/indices.bin",
                              "labels.bin",
                              "split/train.bin",
                              "split/val.bin",
                              "split/test.bin",
                              "partition/offsets.bin",
                              "partition/hubs.bin",
                              "partition/hub_indptr.bin",
                              "partition/hub_indices.bin",
                              "partition/original_ids.bin"};

// The pristine datasets, made once per process, and a scratch copy for each input.
struct Datasets {
  fs::path root, plain, parted, work;

  Datasets() {
    root = fs::temp_directory_path() / ("strata-dataset-fuzzer-" + std::to_string(::getpid()));
    fs::remove_all(root);
    fs::create_directories(root);
    plain = root / "plain";
    parted = root / "parted";
    work = root / "work";
    GenerateOptions g;
    g.out = plain.string();
    g.nodes = 60;
    g.avg_degree = 4;
    g.feature_dim = 4;
    g.classes = 3;
    g.memory_budget_bytes = uint64_t{64} << 20;
    GenerateDataset(g);
    PartitionOptions p;
    p.input = plain.string();
    p.out = parted.string();
    p.parts = 3;
    p.hub_fraction = 0.1;
    p.memory_budget_bytes = uint64_t{64} << 20;
    PartitionDataset(p);
  }
  ~Datasets() { fs::remove_all(root); }
};

// Applies the input's patches: each is [file index][offset, 2 bytes][length][bytes].
void ApplyPatches(const uint8_t* data, size_t size, const fs::path& plain, const fs::path& parted) {
  constexpr size_t kFileCount = sizeof(kFiles) / sizeof(kFiles[0]);
  for (size_t i = 0; i + 4 <= size;) {
    const std::string name = kFiles[data[i] % kFileCount];
    const uint16_t offset = static_cast<uint16_t>(data[i + 1] | data[i + 2] << 8);
    const size_t length = std::min<size_t>(data[i + 3], size - i - 4);
    const fs::path file = (name.starts_with("partition/") ? parted : plain) / name;
    std::fstream out(file, std::ios::in | std::ios::out | std::ios::binary);
    if (out) {
      out.seekp(offset);
      out.write(reinterpret_cast<const char*>(data + i + 4), static_cast<std::streamsize>(length));
    }
    i += 4 + length;
  }
}

TrainOptions OneEpoch(const fs::path& dataset) {
  TrainOptions o;
  o.dataset = dataset.string();
  o.epochs = 1;
  o.model.hidden = 4;
  o.sampling.fanouts = {3, 3};
  o.sampling.batch_size = 16;
  o.memory_budget_bytes = uint64_t{64} << 20;
  o.threads = 1;
  o.progress = false;
  return o;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const Datasets datasets;
  const fs::path plain = datasets.work / "plain", parted = datasets.work / "parted";
  fs::remove_all(datasets.work);
  fs::create_directories(datasets.work);
  fs::copy(datasets.plain, plain, fs::copy_options::recursive);
  fs::copy(datasets.parted, parted, fs::copy_options::recursive);
  ApplyPatches(data, size, plain, parted);

  fuzz::AcceptInputErrors([&] {
    MemoryBudget budget(uint64_t{64} << 20);
    Dataset::Open(plain.string()).Verify(budget);
  });
  fuzz::AcceptInputErrors([&] { Train(OneEpoch(plain)); });
  fuzz::AcceptInputErrors([&] {
    TrainOptions o = OneEpoch(plain);
    o.topology.placement = TopologyPlacement::kDisk;
    Train(o);
  });
  fuzz::AcceptInputErrors([&] {
    TrainOptions o = OneEpoch(plain);
    o.full_graph = true;
    o.model.kind = ModelKind::kGcn;
    Train(o);
  });
  fuzz::AcceptInputErrors([&] {
    TrainOptions o = OneEpoch(parted);
    o.multistage.method = MultistageMethod::kPartition;
    Train(o);
  });
  fuzz::AcceptInputErrors([&] {
    PartitionOptions p;
    p.input = plain.string();
    p.out = (datasets.work / "repartitioned").string();
    p.parts = 2;
    p.memory_budget_bytes = uint64_t{64} << 20;
    PartitionDataset(p);
  });
  fuzz::AcceptInputErrors(
      [&] { ExportEdgeList(plain.string(), (datasets.work / "edges.txt").string()); });
  return 0;
}

}  // namespace strata
