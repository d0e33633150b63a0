#include "dataset/dataset_writer.h"

#include <filesystem>
#include <span>

#include "common/interrupt.h"
#include "strata/error.h"

namespace strata {

DatasetWriter::DatasetWriter(const std::string& out, bool replace_existing)
    : staging_(out, replace_existing) {
  staging_.MakeSubdir("graph");
  staging_.MakeSubdir("split");
  spill_dir_ = staging_.MakeSubdir("spill");
}

void DatasetWriter::Publish() {
  for (const char* name : {"graph/indptr.bin", "graph/indices.bin", "features.bin", "labels.bin",
                           "split/train.bin", "split/val.bin", "split/test.bin"}) {
    if (!meta_.files.contains(name)) {
      throw Error::Internal(std::string("dataset is missing ") + name + " at publish time");
    }
  }
  ThrowIfInterrupted();
  std::filesystem::remove_all(spill_dir_);
  std::string json = meta_.ToJson();
  WriteWholeFile(staging_ / "meta.json", std::as_bytes(std::span(json)));
  staging_.Publish();
}

}  // namespace strata
