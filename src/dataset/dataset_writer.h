// DatasetWriter assembles a dataset directory in a staging directory and publishes it whole:
// components write their files at PathOf(name) and Record() their digests; Publish() checks
// that every file of the format is there, writes meta.json last and renames the directory
// into place. Destroyed unpublished, it leaves nothing behind (see StagingDir). It replaces
// (with --force) only what is safe to lose: an empty directory or a Strata dataset that holds
// none of the command's inputs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "storage/staging_dir.h"
#include "strata/dataset.h"

namespace strata {

class DatasetWriter {
 public:
  // `inputs`: the files and directories the command reads (empty ones ignored). With
  // replace_existing, an existing `out` that is a symbolic link, not a directory, a non-empty
  // directory without a Strata dataset's meta.json, or that holds one of the inputs is refused
  // (input error) before anything is written.
  DatasetWriter(const std::string& out, bool replace_existing,
                const std::vector<std::string>& inputs = {});

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
