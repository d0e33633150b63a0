#include "storage/io_engine_base.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/clock.h"

namespace strata {

namespace {

// EINTR and EAGAIN mean "try again", but a read that keeps failing that way without ever
// making progress would spin forever; after this many tries it is reported as failed.
constexpr uint32_t kMaxRetriesWithoutProgress = 1000;

std::atomic<bool> no_direct_io_said{false};

// Buffered reads take any offset; a sector keeps their plans like those of direct reads.
constexpr uint32_t kBufferedReadAlignment = 512;

// The file system's O_DIRECT offset alignment, or kDirectIoAlignment when it does not say
// (statx without STATX_DIOALIGN, before Linux 6.1) or says something we cannot use.
uint32_t DirectReadAlignment(int fd) {
  struct statx stx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) != 0) return kDirectIoAlignment;
  const uint32_t align = stx.stx_dio_offset_align;
  const bool usable = (stx.stx_mask & STATX_DIOALIGN) != 0 && align != 0 &&
                      (align & (align - 1)) == 0 && kDirectIoAlignment % align == 0 &&
                      kDirectIoAlignment % std::max<uint32_t>(stx.stx_dio_mem_align, 1) == 0;
  return usable ? align : kDirectIoAlignment;
}

}  // namespace

void NoteOnce(std::atomic<bool>& said, const std::string& text) {
  if (!said.exchange(true)) std::fprintf(stderr, "strata: note: %s\n", text.c_str());
}

IoEngineBase::IoEngineBase(const IoEngineOptions& options)
    : depth_(options.depth),
      direct_io_(options.direct_io),
      fault_hook_(options.fault_hook),
      slots_(options.depth) {
  free_slots_.reserve(depth_);
  // Reversed so that slot 0 is used first: small depths then touch little of the table.
  for (uint32_t i = depth_; i > 0; --i) free_slots_.push_back(i - 1);
}

IoEngineBase::~IoEngineBase() {
  for (const OpenedFile& f : files_) {
    if (f.buffered_fd != f.fd) ::close(f.buffered_fd);
    ::close(f.fd);
  }
}

int IoEngineBase::OpenFile(const std::string& path) {
  OpenedFile f;
  f.path = path;
  f.direct = direct_io_;
  f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (direct_io_ ? O_DIRECT : 0));
  // EINVAL from open with O_DIRECT means the file system cannot do direct I/O (tmpfs before
  // Linux 6.6, some FUSE and network file systems); reading through the page cache still
  // works. Whether to say so waits until the path is known to be a regular file: directories
  // give EINVAL too.
  bool refused_direct = f.fd < 0 && errno == EINVAL && direct_io_;
  if (refused_direct) {
    f.direct = false;
    f.fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  }
  if (f.fd < 0) throw Error::System("cannot open", path, errno);
  struct stat st;
  if (::fstat(f.fd, &st) != 0) {
    int errnum = errno;
    ::close(f.fd);
    throw Error::System("cannot stat", path, errnum);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(f.fd);
    throw Error::Input("not a regular file", path);
  }
  if (refused_direct) {
    NoteOnce(no_direct_io_said, path + " does not support O_DIRECT; using buffered reads");
  }
  f.size = static_cast<uint64_t>(st.st_size);
  f.read_alignment = f.direct ? DirectReadAlignment(f.fd) : kBufferedReadAlignment;
  f.buffered_fd = f.fd;
  if (f.direct) {
    f.buffered_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f.buffered_fd < 0) {
      int errnum = errno;
      ::close(f.fd);
      throw Error::System("cannot open", path, errnum);
    }
  }
  files_.push_back(std::move(f));
  return static_cast<int>(files_.size() - 1);
}

const IoEngineBase::OpenedFile& IoEngineBase::CheckedFile(int handle) const {
  if (handle < 0 || static_cast<size_t>(handle) >= files_.size()) {
    throw Error::Internal(
        fmt::format("no file with handle {}: {} files are open", handle, files_.size()));
  }
  return files_[handle];
}

void IoEngineBase::CheckRequest(const ReadRequest& read) const {
  const OpenedFile& f = CheckedFile(read.file);
  if (read.length == 0 || read.buffer == nullptr) {
    throw Error::Internal(fmt::format("empty read of {} bytes at offset {} into {} ({})",
                                      read.length, read.offset,
                                      static_cast<const void*>(read.buffer), f.path));
  }
  if (f.direct && (read.offset % f.read_alignment != 0 || read.length % f.read_alignment != 0 ||
                   reinterpret_cast<uintptr_t>(read.buffer) % kDirectIoAlignment != 0)) {
    throw Error::Internal(fmt::format(
        "O_DIRECT read of {} bytes at offset {} into {} is not aligned to {}-byte offsets and "
        "{}-byte buffers ({})",
        read.length, read.offset, static_cast<const void*>(read.buffer), f.read_alignment,
        kDirectIoAlignment, f.path));
  }
}

void IoEngineBase::Submit(std::span<const ReadRequest> reads) {
  for (const ReadRequest& read : reads) CheckRequest(read);
  pending_.insert(pending_.end(), reads.begin(), reads.end());
  outstanding_ += reads.size();
  Pump();
}

size_t IoEngineBase::Reap(std::span<ReadCompletion> out, size_t min_complete) {
  size_t want = std::min({min_complete, outstanding_, out.size()});
  // Collecting what has already finished first returns as much as possible per call, and
  // the Pump refills the slots those reads freed before this thread waits.
  CollectResults(0);
  Pump();
  while (ready_.size() < want && errors_.empty()) {
    if (in_flight_ == 0) {
      throw Error::Internal(
          fmt::format("I/O engine has {} reads outstanding but none in flight", outstanding_));
    }
    CollectResults(std::min(want - ready_.size(), in_flight_));
    Pump();
  }
  if (!errors_.empty()) {
    Error error = std::move(errors_.front());
    errors_.pop_front();
    throw error;
  }
  size_t n = std::min(ready_.size(), out.size());
  for (size_t i = 0; i < n; ++i) {
    out[i].tag = ready_.front();
    ready_.pop_front();
  }
  outstanding_ -= n;
  return n;
}

IoEngineBase::Attempt IoEngineBase::NextAttempt(uint32_t slot) const {
  const Slot& s = slots_[slot];
  Attempt a;
  a.slot = slot;
  a.file = s.request.file;
  a.offset = s.request.offset + s.done;
  a.length = s.request.length - s.done;
  a.buffer = s.request.buffer + s.done;
  // Only a remainder that starts off the file's direct-read alignment (after a short read)
  // needs the buffered descriptor; reads planned at sector alignment stay direct.
  const OpenedFile& f = files_[a.file];
  a.buffered = f.direct && a.offset % f.read_alignment != 0;
  return a;
}

void IoEngineBase::Pump() {
  bool started = false;
  while (!to_issue_.empty()) {
    if (!StartAttempt(NextAttempt(to_issue_.front()))) break;
    to_issue_.pop_front();
    ++in_flight_;
    ++stats_.reads_issued;
    started = true;
  }
  while (to_issue_.empty() && !pending_.empty() && !free_slots_.empty()) {
    uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    slots_[slot] = Slot{pending_.front(), 0, 0, MonotonicNs()};
    pending_.pop_front();
    if (!StartAttempt(NextAttempt(slot))) {
      to_issue_.push_back(slot);
      break;
    }
    ++in_flight_;
    ++stats_.reads_issued;
    started = true;
  }
  if (started) FlushAttempts();
}

void IoEngineBase::HandleResult(uint32_t slot, int result) {
  --in_flight_;
  Slot& s = slots_[slot];
  const ReadRequest& r = s.request;
  const OpenedFile& f = files_[r.file];
  if (fault_hook_) {
    Attempt a = NextAttempt(slot);
    result = fault_hook_(ReadRequest{a.file, a.offset, a.length, a.buffer, r.tag}, result);
  }
  uint32_t remaining = r.length - s.done;
  if (result < 0) {
    if ((result == -EINTR || result == -EAGAIN) &&
        ++s.retries_without_progress < kMaxRetriesWithoutProgress) {
      ++stats_.resubmissions;
      to_issue_.push_back(slot);
      return;
    }
    Fail(slot, Error::System(fmt::format("cannot read {} bytes at offset {}", r.length, r.offset),
                             f.path, -result));
    return;
  }
  if (static_cast<uint64_t>(result) > remaining) {
    Fail(slot, Error::Internal(fmt::format("read of {} bytes at offset {} returned {} bytes ({})",
                                           remaining, r.offset + s.done, result, f.path)));
    return;
  }
  s.done += static_cast<uint32_t>(result);
  stats_.bytes_read += static_cast<uint64_t>(result);
  if (s.done == r.length) {
    Complete(slot);
    return;
  }
  uint64_t position = r.offset + s.done;
  // The last block of a file whose size is not a multiple of the block size is read whole by
  // O_DIRECT callers; the part past the end reads as zeros. Only a read that started inside
  // the file may end this way: one that starts past the end asks for data that is not there.
  if (position >= f.size && r.offset < f.size) {
    std::memset(r.buffer + s.done, 0, r.length - s.done);
    Complete(slot);
    return;
  }
  if (result == 0) {
    Fail(slot, Error::Input(fmt::format("file is truncated: reading {} bytes at offset {} met "
                                        "its end after {} bytes; it had {} bytes when opened",
                                        r.length, r.offset, s.done, f.size),
                            f.path));
    return;
  }
  // A short read inside the file (a signal, a hook, a huge read split by the kernel): the
  // bytes so far are valid, continue with the rest.
  s.retries_without_progress = 0;
  ++stats_.resubmissions;
  to_issue_.push_back(slot);
}

void IoEngineBase::Complete(uint32_t slot) {
  ++stats_.completed;
  stats_.latency_ns += MonotonicNs() - slots_[slot].started_ns;
  ready_.push_back(slots_[slot].request.tag);
  free_slots_.push_back(slot);
}

void IoEngineBase::Fail(uint32_t slot, Error error) {
  errors_.push_back(std::move(error));
  free_slots_.push_back(slot);
  --outstanding_;
}

}  // namespace strata
