// Sequential file writing and positioned reading with every OS error handled: EINTR is
// retried, short reads and writes are continued, and a failure (ENOSPC, EIO, truncation)
// becomes a strata::Error that names the file. Both types own their file descriptor.
#pragma once

#include <xxhash.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/file_digest.h"

namespace strata {

// FileWriter appends to a new file through a fixed buffer and hashes what it writes (xxh64,
// seed 0), so that publishing a file never needs a second pass over it.
//
// Invariant: bytes() == everything passed to Append so far; the file on disk holds a prefix
// of that until Finish() flushes, fsyncs and closes it.
class FileWriter {
 public:
  // Creates (truncates) `path`. `buffer_bytes` is the write granularity.
  explicit FileWriter(std::string path, size_t buffer_bytes = size_t{4} << 20);
  ~FileWriter();
  FileWriter(const FileWriter&) = delete;
  FileWriter& operator=(const FileWriter&) = delete;

  void Append(const void* data, size_t bytes) {
    if (bytes <= buffer_.size() - buffered_) {
      std::memcpy(buffer_.data() + buffered_, data, bytes);
      buffered_ += bytes;
      bytes_ += bytes;
      if (buffered_ == buffer_.size()) Flush();
    } else {
      AppendSlow(data, bytes);
    }
  }
  template <typename T>
  void Append(std::span<const T> values) {
    Append(values.data(), values.size_bytes());
  }
  template <typename T>
  void AppendValue(const T& value) {
    Append(&value, sizeof(T));
  }
  // Appends zero bytes until bytes() is a multiple of `alignment`.
  void PadTo(uint64_t alignment);

  uint64_t bytes() const { return bytes_; }
  const std::string& path() const { return path_; }

  // Flushes, fsyncs (unless the file is `scratch`, which only this process reads back) and
  // closes; returns the size and checksum of the whole file.
  FileDigest Finish(bool scratch = false);

 private:
  void Flush();
  void AppendSlow(const void* data, size_t bytes);

  std::string path_;
  int fd_ = -1;
  std::vector<std::byte> buffer_;
  size_t buffered_ = 0;
  uint64_t bytes_ = 0;
  XXH64_state_t* hash_ = nullptr;
};

// FileReader reads byte ranges of an existing file with pread.
class FileReader {
 public:
  explicit FileReader(std::string path);
  ~FileReader();
  FileReader(FileReader&& other) noexcept;
  FileReader& operator=(FileReader&& other) noexcept;
  FileReader(const FileReader&) = delete;
  FileReader& operator=(const FileReader&) = delete;

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  // Reads exactly `bytes` at `offset`; reading past the end is an input error ("truncated").
  void ReadExact(uint64_t offset, void* out, size_t bytes) const;
  // Reads up to `bytes` at `offset`; returns how many were read (less only at end of file).
  size_t ReadSome(uint64_t offset, void* out, size_t bytes) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// Reads the first `count` values of type T of `path` into `out`, in 64 MiB reads; a shorter
// file is an input error ("truncated").
template <typename T>
void ReadArrayFile(const std::string& path, T* out, uint64_t count) {
  FileReader file(path);
  constexpr uint64_t kChunk = uint64_t{64} << 20;
  const uint64_t bytes = count * sizeof(T);
  auto* dst = reinterpret_cast<std::byte*>(out);
  for (uint64_t done = 0; done < bytes; done += kChunk) {
    file.ReadExact(done, dst + done, std::min(kChunk, bytes - done));
  }
}

// Size and xxh64 of a whole file, read sequentially.
FileDigest DigestFile(const std::string& path);

// Writes a small file (meta.json, a split list) in one go, fsynced.
FileDigest WriteWholeFile(const std::string& path, std::span<const std::byte> data);

// The process's file mode creation mask, for files made with mkstemp/mkdtemp (always private)
// that should end up with the mode an ordinary create would give.
unsigned CurrentUmask();

// Reads a small file whole.
std::string ReadWholeFile(const std::string& path);

// The directory holding `path` ("." for a bare name).
std::string ParentDirectory(const std::string& path);

// Throws an input error when the file system holding `dir` has less than `bytes` free for an
// unprivileged writer, naming `what` needs them: checked before a large write, so that an
// implausible input (one edge naming node 2^32) is refused at once rather than after filling
// the disk. A file system that cannot say is taken as roomy.
void CheckFreeSpace(const std::string& dir, uint64_t bytes, std::string_view what);

// Makes the names in `dir` durable (a rename into it survives a power cut). Throws a system
// error when the directory cannot be opened or synced; a directory this process may not read
// and file systems that cannot sync a directory (EINVAL) are accepted as they are.
void SyncDirectory(const std::string& dir);

}  // namespace strata
