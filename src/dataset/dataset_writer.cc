#include "dataset/dataset_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <span>
#include <vector>

#include "common/interrupt.h"
#include "storage/file.h"
#include "strata/error.h"

namespace strata {
namespace {

namespace fs = std::filesystem;

// Whether `dir` holds the meta.json of a Strata dataset (its "format" field says so).
bool IsDatasetDirectory(const std::string& dir) {
  std::error_code ec;
  const std::string meta = dir + "/" + std::string(kMetaFile);
  if (!fs::is_regular_file(meta, ec) || fs::file_size(meta, ec) > (uint64_t{1} << 20)) return false;
  const nlohmann::json j = nlohmann::json::parse(ReadWholeFile(meta), nullptr, false);
  return j.is_object() && j.value("format", "") == "strata-dataset";
}

// Whether `path` is `dir` or lies inside it, symbolic links resolved.
bool IsWithin(const std::string& path, const std::string& dir) {
  std::error_code path_error, dir_error;
  const fs::path inner = fs::weakly_canonical(path, path_error);
  const fs::path outer = fs::weakly_canonical(dir, dir_error);
  if (path_error || dir_error) return false;
  return std::mismatch(outer.begin(), outer.end(), inner.begin(), inner.end()).first == outer.end();
}

// `out`, once it is known that --force may replace what is there.
const std::string& ReplaceableOutput(const std::string& out, bool replace_existing,
                                     const std::vector<std::string>& inputs) {
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(out, ec);
  if (!replace_existing || !fs::exists(status)) return out;  // StagingDir refuses without --force
  constexpr std::string_view kOnly = "--force replaces only a Strata dataset directory";
  if (fs::is_symlink(status)) {
    throw Error::Input(fmt::format("output is a symbolic link; {}", kOnly), out);
  }
  if (!fs::is_directory(status)) {
    throw Error::Input(fmt::format("output exists and is not a directory; {}", kOnly), out);
  }
  if (!fs::is_empty(out, ec) && !IsDatasetDirectory(out)) {
    throw Error::Input(
        fmt::format("output is a directory without a Strata dataset's meta.json; {}", kOnly), out);
  }
  for (const std::string& input : inputs) {
    if (!input.empty() && IsWithin(input, out)) {
      throw Error::Input(
          fmt::format("output holds this command's input {}; not replacing it", input), out);
    }
  }
  return out;
}

}  // namespace

DatasetWriter::DatasetWriter(const std::string& out, bool replace_existing,
                             const std::vector<std::string>& inputs)
    : staging_(ReplaceableOutput(out, replace_existing, inputs), replace_existing) {
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
