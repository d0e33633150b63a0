// Fuzzes the .npz reader as `strata import --features x.npz` uses it: the ZIP container
// (ZipArchive: the end records, zip64 fields, the central directory, each member extracted
// with inflate and its CRC-32 checked) and the SciPy matrix in it (NpzFeatures: format, shape,
// the members' .npy headers, then every indptr and index value while the rows are converted
// into a staging dataset that is never published). A small budget keeps a CSC input's
// transpose from growing with what the archive claims.
#include <stdlib.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "dataset/dataset_writer.h"
#include "dataset/npz_features.h"
#include "fuzz_support.h"
#include "strata/memory_budget.h"

namespace strata {
namespace {

// A private directory for the staging datasets, removed when the fuzzer exits.
class ScratchDirectory {
 public:
  ScratchDirectory() {
    std::string pattern = std::filesystem::temp_directory_path().string() + "/npz-fuzz-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
    fuzz::Check(!path_.empty(), "cannot create a scratch directory");
  }
  ~ScratchDirectory() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static fuzz::FuzzInputFile file;
  static ScratchDirectory scratch;
  const std::string& path = file.Write(data, size);
  fuzz::AcceptInputErrors([&] {
    MemoryBudget budget(uint64_t{64} << 20);
    DatasetWriter writer(scratch.path() + "/out", /*replace_existing=*/true);
    NpzFeatures features(path, writer.spill_dir());
    features.Import(budget, writer);
  });
  return 0;
}

}  // namespace strata
