// The real datasets the repository carries as datasets/<name>.npz (Cora, CiteSeer, Amazon
// Computers; datasets/README.md), for the tests that train on or import real data: the
// archive, its arrays as a directory of .npy files, and the dataset imported from it, each made
// once per test binary run.
#pragma once

#include <filesystem>
#include <string>

#include "storage/zip_archive.h"
#include "strata/import.h"
#include "test_util.h"

namespace strata::testing {

inline std::string RepositoryArchive(const std::string& name) {
  return std::string(STRATA_SOURCE_DIR) + "/datasets/" + name + ".npz";
}

// A scratch directory that lives for the whole run.
inline const ScratchDir& RepositoryScratch() {
  static const ScratchDir* dir = new ScratchDir();
  return *dir;
}

// The archive's members (edge_index.npy, features.npy, ...) extracted into one directory.
inline std::string RepositoryArrays(const std::string& name) {
  const std::string out = RepositoryScratch() / (name + "-arrays");
  if (!std::filesystem::exists(out)) {
    const ZipArchive archive(RepositoryArchive(name));
    std::filesystem::create_directories(out);
    for (const ZipMember& member : archive.members()) {
      archive.Extract(member, out + "/" + member.name);
    }
  }
  return out;
}

// The dataset imported from the archive.
inline std::string RepositoryDataset(const std::string& name) {
  const std::string out = RepositoryScratch() / name;
  if (!std::filesystem::exists(out)) {
    ImportOptions o;
    o.out = out;
    o.memory_budget_bytes = uint64_t{256} << 20;
    ImportNpyDirectory(RepositoryArchive(name), o);
  }
  return out;
}

}  // namespace strata::testing
