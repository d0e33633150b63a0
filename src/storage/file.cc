#include "storage/file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "strata/error.h"
#include "strata/memory_budget.h"

namespace strata {

FileWriter::FileWriter(std::string path, size_t buffer_bytes)
    : path_(std::move(path)), buffer_(buffer_bytes), hash_(XXH64_createState()) {
  XXH64_reset(hash_, 0);
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    int errnum = errno;
    XXH64_freeState(hash_);
    throw Error::System("cannot create file", path_, errnum);
  }
}

FileWriter::~FileWriter() {
  if (fd_ >= 0) ::close(fd_);
  XXH64_freeState(hash_);
}

void FileWriter::AppendSlow(const void* data, size_t bytes) {
  const auto* in = static_cast<const std::byte*>(data);
  bytes_ += bytes;
  while (bytes > 0) {
    size_t take = std::min(bytes, buffer_.size() - buffered_);
    std::memcpy(buffer_.data() + buffered_, in, take);
    buffered_ += take;
    in += take;
    bytes -= take;
    if (buffered_ == buffer_.size()) Flush();
  }
}

void FileWriter::PadTo(uint64_t alignment) {
  static constexpr std::byte kZeros[4096] = {};
  uint64_t rem = bytes_ % alignment;
  uint64_t pad = rem == 0 ? 0 : alignment - rem;
  while (pad > 0) {
    size_t take = static_cast<size_t>(std::min<uint64_t>(pad, sizeof(kZeros)));
    Append(kZeros, take);
    pad -= take;
  }
}

void FileWriter::Flush() {
  // Hashing whole buffers here rather than each Append keeps small appends cheap.
  XXH64_update(hash_, buffer_.data(), buffered_);
  size_t done = 0;
  while (done < buffered_) {
    ssize_t n = ::write(fd_, buffer_.data() + done, buffered_ - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw Error::System("cannot write", path_, errno);
    }
    // A zero-byte write on a regular file means no space could be allocated.
    if (n == 0) throw Error::System("cannot write", path_, ENOSPC);
    done += static_cast<size_t>(n);
  }
  buffered_ = 0;
}

FileDigest FileWriter::Finish(bool scratch) {
  Flush();
  // Delayed allocation can report ENOSPC or EIO only at fsync or close, so both are checked.
  if (!scratch && ::fsync(fd_) != 0 && errno != EINVAL) {
    throw Error::System("cannot sync", path_, errno);
  }
  int fd = std::exchange(fd_, -1);
  if (::close(fd) != 0 && errno != EINTR) throw Error::System("cannot close", path_, errno);
  return FileDigest{bytes_, XXH64_digest(hash_)};
}

FileReader::FileReader(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error::System("cannot open", path_, errno);
  struct stat st;
  if (::fstat(fd_, &st) != 0) {
    int errnum = errno;
    ::close(fd_);
    throw Error::System("cannot stat", path_, errnum);
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd_);
    throw Error::Input("is a directory, expected a file", path_);
  }
  size_ = static_cast<uint64_t>(st.st_size);
}

FileReader::~FileReader() {
  if (fd_ >= 0) ::close(fd_);
}

FileReader::FileReader(FileReader&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)), size_(other.size_) {}

FileReader& FileReader::operator=(FileReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

size_t FileReader::ReadSome(uint64_t offset, void* out, size_t bytes) const {
  auto* dst = static_cast<std::byte*>(out);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd_, dst + done, bytes - done, static_cast<off_t>(offset + done));
    if (n < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      throw Error::System("cannot read at offset " + std::to_string(offset + done), path_, errno);
    }
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  return done;
}

void FileReader::ReadExact(uint64_t offset, void* out, size_t bytes) const {
  size_t got = ReadSome(offset, out, bytes);
  if (got != bytes) {
    throw Error::Input("file is truncated: needed " + std::to_string(offset + bytes) +
                           " bytes, it has " + std::to_string(offset + got),
                       path_);
  }
}

FileDigest DigestFile(const std::string& path) {
  FileReader reader(path);
  std::vector<std::byte> buffer(size_t{8} << 20);
  XXH64_state_t* state = XXH64_createState();
  XXH64_reset(state, 0);
  uint64_t offset = 0;
  try {
    while (offset < reader.size()) {
      size_t got = reader.ReadSome(offset, buffer.data(), buffer.size());
      if (got == 0) break;
      XXH64_update(state, buffer.data(), got);
      offset += got;
    }
  } catch (...) {
    XXH64_freeState(state);
    throw;
  }
  FileDigest digest{offset, XXH64_digest(state)};
  XXH64_freeState(state);
  return digest;
}

FileDigest WriteWholeFile(const std::string& path, std::span<const std::byte> data) {
  FileWriter writer(path, std::max<size_t>(data.size(), 1));
  writer.Append(data.data(), data.size());
  return writer.Finish();
}

unsigned CurrentUmask() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return mask;
}

std::string ReadWholeFile(const std::string& path) {
  FileReader reader(path);
  std::string text(reader.size(), '\0');
  reader.ReadExact(0, text.data(), text.size());
  return text;
}

std::string ParentDirectory(const std::string& path) {
  std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

void CheckFreeSpace(const std::string& dir, uint64_t bytes, std::string_view what) {
  struct statvfs fs {};
  if (::statvfs(dir.c_str(), &fs) != 0) return;
  const uint64_t free_bytes = static_cast<uint64_t>(fs.f_bavail) * fs.f_frsize;
  if (bytes <= free_bytes) return;
  throw Error::Input(fmt::format("{} needs {} on disk, but the file system has {} free", what,
                                 FormatBytes(bytes), FormatBytes(free_bytes)),
                     dir);
}

void SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // A directory one may write but not read (mode 0333) cannot be opened to sync; what was
  // renamed into it is in place all the same.
  if (fd < 0 && (errno == EACCES || errno == EPERM)) return;
  if (fd < 0) throw Error::System("cannot open the directory to sync it", dir, errno);
  const int result = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (result != 0 && error != EINVAL) {
    throw Error::System("cannot sync the directory", dir, error);
  }
}

}  // namespace strata
