// Scratch files: files only this process writes and reads back (full-graph intermediates,
// layer-wise activations, partition-based sampling's historical embeddings). Each is an
// O_TMPFILE inode with no name, so a crash or a kill leaves nothing behind, opened for direct
// I/O where the file system allows it (else through the page cache, said once on stderr), its
// space reserved up front so that a full disk is refused before the work starts, not midway.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace strata {

// Where scratch files go: `configured` when set, else $TMPDIR, else /tmp. Not
// std::filesystem::temp_directory_path(): it throws its own error for a TMPDIR that is not a
// directory, where opening the scratch file there gives Strata's, naming it.
std::string ScratchDirectory(const std::string& configured);

// Owns one scratch file's descriptor.
class ScratchFile {
 public:
  ScratchFile() = default;
  // Opens a scratch file in `dir` and reserves `bytes`; `what` names its content in errors.
  ScratchFile(const std::string& dir, uint64_t bytes, std::string_view what);
  ~ScratchFile();
  ScratchFile(ScratchFile&& other) noexcept;
  ScratchFile& operator=(ScratchFile&& other) noexcept;

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  bool direct() const { return direct_; }
  const std::string& dir() const { return dir_; }
  const std::string& what() const { return what_; }

 private:
  void Close();

  int fd_ = -1;
  bool direct_ = false;
  std::string dir_;
  std::string what_;
};

// Moves `bytes` between `buffer` and scratch file `fd` at `offset`, whole: short transfers
// continue, EINTR retries. A direct transfer cut short off a 4 KiB boundary cannot be continued
// (the rest would be misaligned): it is the device's error, ENOSPC for a write and EIO for a
// read. Errors name `what` and `dir`.
void TransferScratch(int fd, bool direct, bool write, std::byte* buffer, uint64_t offset,
                     uint64_t bytes, const std::string& what, const std::string& dir);

}  // namespace strata
