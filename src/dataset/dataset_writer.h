// DatasetWriter assembles a dataset directory in a staging directory and publishes it whole:
// components write their files at PathOf(name) and Record() their digests; Publish() checks
// that every file of the format is there, writes meta.json last and renames the directory
// into place. Destroyed unpublished, it leaves nothing behind (see StagingDir).
#pragma once

#include <string>
#include <string_view>

#include "storage/staging_dir.h"
#include "strata/dataset.h"

namespace strata {

class DatasetWriter {
 public:
  DatasetWriter(const std::string& out, bool replace_existing);

  // Staging path of a dataset file, e.g. PathOf(kIndptrFile).
  std::string PathOf(std::string_view name) const { return staging_ / std::string(name); }
  // Creates a subdirectory of the staging directory for files of that prefix.
  void MakeSubdir(std::string_view name) { staging_.MakeSubdir(std::string(name)); }
  // A directory for temporary run files, removed before publishing.
  const std::string& spill_dir() const { return spill_dir_; }

  DatasetMeta& meta() { return meta_; }
  void Record(std::string_view name, const FileDigest& digest) {
    meta_.files[std::string(name)] = digest;
  }

  void Publish();

 private:
  StagingDir staging_;
  std::string spill_dir_;
  DatasetMeta meta_;
};

}  // namespace strata
