#include "storage/scratch_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <utility>

#include "storage/io_engine_base.h"
#include "strata/error.h"
#include "strata/memory_budget.h"

namespace strata {
namespace {

std::atomic<bool> buffered_scratch_said{false};

}  // namespace

std::string ScratchDirectory(const std::string& configured) {
  const char* tmpdir = std::getenv("TMPDIR");
  return !configured.empty() ? configured : tmpdir != nullptr && *tmpdir != 0 ? tmpdir : "/tmp";
}

ScratchFile::ScratchFile(const std::string& dir, uint64_t bytes, std::string_view what)
    : dir_(dir), what_(what) {
  fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC | O_DIRECT, 0600);
  direct_ = fd_ >= 0;
  if (fd_ < 0 && errno == EINVAL) {
    fd_ = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ >= 0) {
      NoteOnce(buffered_scratch_said,
               dir + " does not support O_DIRECT; scratch files there go through the page cache");
    }
  }
  if (fd_ < 0) {
    throw Error::System(fmt::format("cannot make a scratch file for {} in", what), dir, errno);
  }
  if (bytes == 0) return;
  if (const int err = ::posix_fallocate(fd_, 0, static_cast<off_t>(bytes)); err != 0) {
    Close();
    throw Error::System(fmt::format("cannot reserve {} for {} in", FormatBytes(bytes), what), dir,
                        err);
  }
}

ScratchFile::~ScratchFile() { Close(); }

ScratchFile::ScratchFile(ScratchFile&& other) noexcept { *this = std::move(other); }

ScratchFile& ScratchFile::operator=(ScratchFile&& other) noexcept {
  if (this == &other) return *this;
  Close();
  fd_ = std::exchange(other.fd_, -1);
  direct_ = other.direct_;
  dir_ = std::move(other.dir_);
  what_ = std::move(other.what_);
  return *this;
}

void ScratchFile::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TransferScratch(int fd, bool direct, bool write, std::byte* buffer, uint64_t offset,
                     uint64_t bytes, const std::string& what, const std::string& dir) {
  auto fail = [&](int err) {
    throw Error::System(write ? fmt::format("cannot write {} to a scratch file in", what)
                              : fmt::format("cannot read {} back from a scratch file in", what),
                        dir, err);
  };
  for (uint64_t done = 0; done < bytes;) {
    const ssize_t n = write ? ::pwrite(fd, buffer + done, bytes - done, offset + done)
                            : ::pread(fd, buffer + done, bytes - done, offset + done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(errno);
    if (n == 0) fail(write ? ENOSPC : EIO);
    done += static_cast<uint64_t>(n);
    if (direct && done < bytes && done % kDirectIoAlignment != 0) fail(write ? ENOSPC : EIO);
  }
}

}  // namespace strata
