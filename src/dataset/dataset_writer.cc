#include "dataset/dataset_writer.h"

#include <fmt/format.h>

#include <filesystem>
#include <span>
#include <vector>

#include "common/interrupt.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {

DatasetWriter::DatasetWriter(const std::string& out, bool replace_existing)
    : staging_(out, replace_existing) {
  staging_.MakeSubdir("graph");
  staging_.MakeSubdir("split");
  spill_dir_ = staging_.MakeSubdir("spill");
}

void DatasetWriter::Publish() {
  std::vector<std::string_view> names = {kIndptrFile, kIndicesFile, kLabelsFile};
  if (meta_.sparse_features) {
    names.insert(names.end(), {kSparseIndptrFile, kSparseIndicesFile, kSparseValuesFile});
  } else {
    names.push_back(kFeaturesFile);
  }
  for (Split split : kAllSplits) names.push_back(SplitFile(split));
  for (std::string_view name : names) {
    if (!meta_.files.contains(std::string(name))) {
      throw Error::Internal(fmt::format("dataset is missing {} at publish time", name));
    }
  }
  ThrowIfInterrupted();
  std::filesystem::remove_all(spill_dir_);
  std::string json = meta_.ToJson();
  WriteWholeFile(PathOf(kMetaFile), std::as_bytes(std::span(json)));
  staging_.Publish();
}

}  // namespace strata
