// IoEngine reads byte ranges of files into caller-owned memory with many reads in flight at
// once, the way GIDS and Helios keep an SSD busy: submission and completion are decoupled, so
// a caller queues a whole batch of reads (Submit), goes on with other work, and collects the
// finished ones later (Reap) in any order, identified by the tag it chose. Two engines
// implement it: io_uring (one ring, registered files and buffers when the kernel allows) and,
// where io_uring cannot be set up, a pool of threads calling pread.
//
// Files are opened with O_DIRECT, so reads bypass the page cache and a feature row costs one
// device read; a file system that refuses O_DIRECT (tmpfs) is read through the page cache.
// For an O_DIRECT file the offset, length and buffer address of every read must be multiples
// of kDirectIoAlignment.
//
// Every completed read is whole: `length` bytes landed in `buffer`. Short reads are continued,
// EINTR and EAGAIN are retried, and a read that extends past the end of the file (the size
// seen by OpenFile) completes with the bytes after the end set to zero. A read that fails (EIO,
// a file truncated under us, a read starting past the end) is dropped from outstanding() and
// makes exactly one call of Reap throw strata::Error naming the file and the offset.
//
// Invariants: outstanding() == reads submitted - completions returned by Reap - reads failed;
// at most depth() reads are in the OS at any time, the rest wait inside the engine.
//
// Thread safety: an engine is used by one thread at a time; its pread worker threads, if any,
// are private. Buffers belong to the caller and must stay valid until their read is reaped,
// has failed, or the engine is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace strata {

// O_DIRECT wants offsets, lengths and buffers aligned to the device's logical block size;
// 4096 is a multiple of every block size in use (512 or 4096), so one constant serves all.
// Buffers are always aligned to it; offsets and lengths may use the finer
// IoEngine::read_alignment of a file, which lets a small row cost a small read.
inline constexpr uint32_t kDirectIoAlignment = 4096;

struct ReadRequest {
  int file = 0;         // handle from IoEngine::OpenFile
  uint64_t offset = 0;  // byte offset in the file
  uint32_t length = 0;  // bytes to read, > 0
  std::byte* buffer = nullptr;
  uint64_t tag = 0;  // returned in the ReadCompletion; the engine does not look at it
};

struct ReadCompletion {
  uint64_t tag = 0;
};

struct IoEngineOptions {
  enum class Kind {
    kAuto,   // io_uring, or the pread pool when io_uring cannot be set up
    kUring,  // io_uring or an error
    kPread,  // the pread thread pool
  };
  Kind kind = Kind::kAuto;
  // Reads in the OS at once: the ring's size, or the pread pool's queue. 1..32768.
  uint32_t depth = 256;
  uint32_t pread_threads = 8;
  // false reads every file through the page cache, as if its file system refused O_DIRECT.
  bool direct_io = true;
  // For tests: called with every attempt (the part of a request still to read) and its raw OS
  // result (bytes read, or -errno); the engine acts on the value it returns instead. It runs on
  // the thread that calls Submit/Reap and must not throw.
  std::function<int(const ReadRequest& attempt, int result)> fault_hook;
};

struct IoEngineStats {
  uint64_t reads_issued = 0;   // attempts handed to the OS, resubmissions included
  uint64_t resubmissions = 0;  // continued short reads and EINTR/EAGAIN retries
  uint64_t bytes_read = 0;     // bytes that landed in buffers (zero fill past EOF excluded)
  uint64_t completed = 0;      // reads completed
  // Summed over completed reads: from handing the read to the OS to its completion being
  // seen (time queued inside the engine excluded), for the storage access accumulator.
  uint64_t latency_ns = 0;
};

class IoEngine {
 public:
  IoEngine() = default;
  IoEngine(const IoEngine&) = delete;
  IoEngine& operator=(const IoEngine&) = delete;
  // Waits for every read the OS still has before returning, because the OS writes into the
  // caller's buffers; reads not yet handed to the OS are dropped.
  virtual ~IoEngine();

  // Opens `path` for reading with O_DIRECT and returns a small handle (0, 1, 2, ... in order of
  // opening) for ReadRequest::file. When the file system refuses O_DIRECT the file is read
  // through the page cache, announced once per process on stderr. Throws strata::Error when the
  // file cannot be opened or is not a regular file. The file stays open until destruction.
  virtual int OpenFile(const std::string& path) = 0;

  // Reads whose buffers lie inside `arena` let the kernel skip pinning pages per read
  // (io_uring's fixed buffers). Optional; replaces an earlier arena; only while outstanding()
  // is 0. When the kernel refuses (RLIMIT_MEMLOCK), this is announced once per process and
  // reads go on unregistered. The arena must outlive the engine or the next RegisterBuffer.
  virtual void RegisterBuffer(std::span<std::byte> arena) = 0;

  // Queues `reads` and hands as many to the OS as depth() allows; never waits for a read to
  // finish. Checks every request before queuing any: a bad file handle, a zero length, a null
  // buffer or a misaligned O_DIRECT read throws an internal error and queues nothing.
  virtual void Submit(std::span<const ReadRequest> reads) = 0;

  // Writes completions of finished reads to `out` and returns how many. Waits only until at
  // least min(min_complete, outstanding(), out.size()) are available; returns more when more
  // are. Throws strata::Error for a failed read (see above); completions collected during that
  // call are kept for the next one.
  virtual size_t Reap(std::span<ReadCompletion> out, size_t min_complete) = 0;

  virtual size_t outstanding() const = 0;
  virtual uint32_t depth() const = 0;
  virtual std::string_view name() const = 0;  // "io_uring" or "pread"
  virtual IoEngineStats stats() const = 0;

  // What OpenFile found: whether reads of `file` bypass the page cache, its size when opened.
  virtual bool direct(int file) const = 0;
  virtual uint64_t file_size(int file) const = 0;
  // Offsets and lengths of reads of `file` must be multiples of this: the file system's
  // O_DIRECT offset alignment (statx STATX_DIOALIGN; 512 on most SSDs), 4096 when it does not
  // say, 512 for buffered files. Always a power of two dividing kDirectIoAlignment.
  virtual uint32_t read_alignment(int file) const = 0;
  // Whether reads into the registered arena use fixed buffers.
  virtual bool buffer_registered() const = 0;
};

// Makes the engine `options` asks for. With Kind::kAuto, the environment variable
// STRATA_IO_ENGINE=pread (or io_uring) forces one; when io_uring cannot be set up (ENOSYS,
// EPERM under seccomp, the io_uring_disabled sysctl) this is announced once per process on
// stderr and the pread pool is returned. Kind::kUring throws strata::Error instead.
std::unique_ptr<IoEngine> MakeIoEngine(const IoEngineOptions& options);

// Waits for every read `engine` has outstanding, dropping their completions and errors:
// what a reader does after a failed read, before the buffers of the others are reused.
void DrainDiscardingErrors(IoEngine& engine);

}  // namespace strata
