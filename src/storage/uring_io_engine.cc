// The io_uring engine: one ring whose submission queue holds depth() entries. Submit fills
// SQEs and makes them visible with one io_uring_submit; Reap harvests CQEs with
// io_uring_peek_batch_cqe and, when it must wait, submits and waits in a single
// io_uring_enter (io_uring_submit_and_wait). Files are registered in a sparse fixed-file table
// and the caller's arena as a fixed buffer, which saves the kernel a file-table lookup and a
// page pinning per read; both are optional, and reads work unregistered when the kernel says no.
#include <fmt/format.h>
#include <liburing.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "storage/io_engine_base.h"
#include "strata/memory_budget.h"

namespace strata {

namespace {

// Slots in the fixed-file table; each O_DIRECT file takes two (direct and buffered). Files
// beyond it are used by descriptor, which costs a little per read but works.
constexpr unsigned kFixedFiles = 64;
constexpr unsigned kHarvestBatch = 128;

std::atomic<bool> no_fixed_buffer_said{false};

class UringIoEngine final : public IoEngineBase {
 public:
  explicit UringIoEngine(const IoEngineOptions& options) : IoEngineBase(options) {}

  // Sets up the ring; returns 0 or the errno that io_uring_setup failed with.
  int Init() {
    int ret = io_uring_queue_init(depth(), &ring_, 0);
    if (ret < 0) return -ret;
    ring_ready_ = true;
    return 0;
  }

  ~UringIoEngine() override {
    if (!ring_ready_) return;
    // The kernel writes into the caller's buffers until each read's CQE is posted, and
    // io_uring_queue_exit does not wait for that, so wait here. Reads that were never started
    // are simply forgotten.
    while (in_flight() > 0) {
      int ret = io_uring_submit_and_wait(&ring_, 1);
      if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) break;
      io_uring_cqe* cqes[kHarvestBatch];
      unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, kHarvestBatch);
      io_uring_cq_advance(&ring_, n);
      DiscardResults(n);
    }
    io_uring_queue_exit(&ring_);
  }

  int OpenFile(const std::string& path) override {
    int handle = IoEngineBase::OpenFile(path);
    const OpenedFile& f = file(handle);
    FixedFile fixed;
    if (!tried_file_table_) {
      tried_file_table_ = true;
      have_file_table_ = io_uring_register_files_sparse(&ring_, kFixedFiles) == 0;
    }
    int fds[2] = {f.fd, f.buffered_fd};
    unsigned count = f.buffered_fd != f.fd ? 2 : 1;
    if (have_file_table_ && next_fixed_file_ + count <= kFixedFiles &&
        io_uring_register_files_update(&ring_, next_fixed_file_, fds, count) ==
            static_cast<int>(count)) {
      fixed.fd = static_cast<int>(next_fixed_file_);
      fixed.buffered_fd = static_cast<int>(next_fixed_file_ + count - 1);
      next_fixed_file_ += count;
    }
    fixed_files_.push_back(fixed);
    return handle;
  }

  void RegisterBuffer(std::span<std::byte> arena) override {
    if (outstanding() > 0) {
      throw Error::Internal(fmt::format("RegisterBuffer with {} reads outstanding", outstanding()));
    }
    if (arena_registered_) io_uring_unregister_buffers(&ring_);
    arena_registered_ = false;
    arena_ = arena;
    if (arena.empty()) return;
    iovec iov{arena.data(), arena.size()};
    int ret = io_uring_register_buffers(&ring_, &iov, 1);
    if (ret == 0) {
      arena_registered_ = true;
    } else {
      // Registration pins the arena, which counts against RLIMIT_MEMLOCK unless the process
      // has CAP_IPC_LOCK; unregistered reads pin per read and are only a little slower.
      NoteOnce(no_fixed_buffer_said,
               fmt::format("cannot register a {} I/O buffer with io_uring ({}); using "
                           "unregistered reads",
                           FormatBytes(arena.size()), std::strerror(-ret)));
    }
  }

  std::string_view name() const override { return "io_uring"; }
  bool buffer_registered() const override { return arena_registered_; }

 private:
  struct FixedFile {
    int fd = -1;  // index in the fixed-file table, -1 when not registered
    int buffered_fd = -1;
  };

  bool StartAttempt(const Attempt& a) override {
    io_uring_sqe* sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) {
      // Not expected (in-flight attempts never exceed the queue), but a kernel that could not
      // take every SQE at the last submit leaves them in the ring; push them and look again.
      io_uring_submit(&ring_);
      sqe = io_uring_get_sqe(&ring_);
      if (sqe == nullptr) return false;
    }
    const OpenedFile& f = file(a.file);
    const FixedFile& fixed = fixed_files_[a.file];
    int fixed_index = a.buffered ? fixed.buffered_fd : fixed.fd;
    int fd = fixed_index >= 0 ? fixed_index : (a.buffered ? f.buffered_fd : f.fd);
    if (arena_registered_ && a.buffer >= arena_.data() &&
        a.buffer + a.length <= arena_.data() + arena_.size()) {
      io_uring_prep_read_fixed(sqe, fd, a.buffer, a.length, a.offset, 0);
    } else {
      io_uring_prep_read(sqe, fd, a.buffer, a.length, a.offset);
    }
    if (fixed_index >= 0) sqe->flags |= IOSQE_FIXED_FILE;
    io_uring_sqe_set_data64(sqe, a.slot);
    return true;
  }

  void FlushAttempts() override {
    // EAGAIN/EBUSY (the kernel is short of resources) and EINTR leave the SQEs in the ring;
    // the io_uring_submit_and_wait in CollectResults submits them later.
    int ret = io_uring_submit(&ring_);
    if (ret < 0 && ret != -EAGAIN && ret != -EBUSY && ret != -EINTR) {
      throw Error::System("cannot submit reads to io_uring", {}, -ret);
    }
  }

  void CollectResults(size_t min_results) override {
    if (min_results > 0) {
      for (;;) {
        int ret = io_uring_submit_and_wait(&ring_, static_cast<unsigned>(min_results));
        if (ret >= 0 || ret == -EAGAIN || ret == -EBUSY) break;
        if (ret == -EINTR) continue;
        throw Error::System("cannot wait for io_uring completions", {}, -ret);
      }
    }
    io_uring_cqe* cqes[kHarvestBatch];
    for (;;) {
      unsigned n = io_uring_peek_batch_cqe(&ring_, cqes, kHarvestBatch);
      if (n == 0) break;
      for (unsigned i = 0; i < n; ++i) {
        HandleResult(static_cast<uint32_t>(io_uring_cqe_get_data64(cqes[i])), cqes[i]->res);
      }
      io_uring_cq_advance(&ring_, n);
      if (n < kHarvestBatch) break;
    }
  }

  io_uring ring_;
  bool ring_ready_ = false;
  bool tried_file_table_ = false;
  bool have_file_table_ = false;
  unsigned next_fixed_file_ = 0;
  std::vector<FixedFile> fixed_files_;  // by file handle
  std::span<std::byte> arena_;
  bool arena_registered_ = false;
};

}  // namespace

std::unique_ptr<IoEngine> MakeUringIoEngine(const IoEngineOptions& options, int* error) {
  auto engine = std::make_unique<UringIoEngine>(options);
  *error = engine->Init();
  if (*error != 0) return nullptr;
  return engine;
}

}  // namespace strata
