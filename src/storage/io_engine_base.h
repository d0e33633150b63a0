// IoEngineBase is the part of an IoEngine that does not depend on how reads reach the OS: the
// table of open files, the check of each request, the queue of reads waiting for one of the
// depth() slots, and the rules that turn the raw result of an attempt into a completion, a
// continuation, a retry or an error. The io_uring and pread engines only start attempts, make
// them visible to the OS, and collect their raw results.
//
// A read occupies a slot from the moment its first attempt is started until it completes or
// fails; each slot has at most one attempt in the OS. Hence in_flight() <= depth() always, and
// an io_uring whose queues hold depth() entries can never overflow.
//
// Invariants: outstanding() == pending_ + slots in use + ready_ (failed reads leave all three);
// every slot in use is either in the OS (counted by in_flight()) or listed in to_issue_.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "strata/error.h"
#include "strata/io_engine.h"

namespace strata {

class IoEngineBase : public IoEngine {
 public:
  int OpenFile(const std::string& path) override;
  void Submit(std::span<const ReadRequest> reads) override;
  size_t Reap(std::span<ReadCompletion> out, size_t min_complete) override;
  size_t outstanding() const override { return outstanding_; }
  uint32_t depth() const override { return depth_; }
  IoEngineStats stats() const override { return stats_; }
  bool direct(int file) const override { return CheckedFile(file).direct; }
  uint64_t file_size(int file) const override { return CheckedFile(file).size; }
  uint32_t read_alignment(int file) const override { return CheckedFile(file).read_alignment; }

 protected:
  explicit IoEngineBase(const IoEngineOptions& options);
  // Closes the files. The subclass's destructor must already have waited for its attempts.
  ~IoEngineBase() override;

  struct OpenedFile {
    std::string path;
    int fd = -1;           // O_DIRECT unless the file system refused it
    int buffered_fd = -1;  // == fd when !direct
    uint64_t size = 0;     // when opened; reads past it complete with zeros
    bool direct = false;
    uint32_t read_alignment = kDirectIoAlignment;
  };

  // One attempt at (the rest of) the read in `slot`.
  struct Attempt {
    uint32_t slot = 0;
    int file = 0;
    // An O_DIRECT read that stopped off the file's direct-read alignment (only the end of file
    // or a fault hook does that) cannot be continued with O_DIRECT: its remainder is misaligned.
    // Such a remainder goes through a second, buffered descriptor of the same file; the file is
    // read-only, so the page cache and the disk agree.
    bool buffered = false;
    uint64_t offset = 0;
    uint32_t length = 0;
    std::byte* buffer = nullptr;
  };

  // Hands `attempt` to the OS, or stages it for the next FlushAttempts. Returns false when
  // there is no room right now; the base then tries again after collecting results.
  virtual bool StartAttempt(const Attempt& attempt) = 0;
  // Makes the attempts started since the last call visible to the OS. Does not wait.
  virtual void FlushAttempts() = 0;
  // Waits until at least `min_results` attempts have finished (0: does not wait), then passes
  // the raw result of every finished attempt to HandleResult.
  virtual void CollectResults(size_t min_results) = 0;

  // Applies the fault hook and decides what the result means for the read in `slot`.
  void HandleResult(uint32_t slot, int result);
  // For destructors draining the OS: results that nobody will act on.
  void DiscardResults(size_t count) { in_flight_ -= count; }

  size_t in_flight() const { return in_flight_; }
  const OpenedFile& file(int handle) const { return files_[handle]; }

 private:
  struct Slot {
    ReadRequest request;
    uint32_t done = 0;  // bytes of request.length that have landed
    uint32_t retries_without_progress = 0;
    uint64_t started_ns = 0;  // when its first attempt went to the OS
  };

  const OpenedFile& CheckedFile(int handle) const;
  void CheckRequest(const ReadRequest& read) const;
  Attempt NextAttempt(uint32_t slot) const;
  // Starts attempts for slots waiting in to_issue_, then for pending reads while slots are
  // free, and flushes them to the OS.
  void Pump();
  void Complete(uint32_t slot);
  void Fail(uint32_t slot, Error error);

  const uint32_t depth_;
  const bool direct_io_;
  const std::function<int(const ReadRequest&, int)> fault_hook_;
  std::vector<OpenedFile> files_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_slots_;
  std::deque<ReadRequest> pending_;  // submitted, waiting for a slot
  std::deque<uint32_t> to_issue_;    // slots whose next attempt is not yet started
  std::deque<uint64_t> ready_;       // tags of completed reads not yet reaped
  std::deque<Error> errors_;         // one per failed read, thrown by Reap one at a time
  size_t outstanding_ = 0;
  size_t in_flight_ = 0;
  IoEngineStats stats_;
};

// Prints "strata: note: <text>" on stderr the first time it is called with `said`.
void NoteOnce(std::atomic<bool>& said, const std::string& text);

// Returns nullptr and sets *error (an errno) when the kernel refuses to set up a ring.
std::unique_ptr<IoEngine> MakeUringIoEngine(const IoEngineOptions& options, int* error);
std::unique_ptr<IoEngine> MakePreadIoEngine(const IoEngineOptions& options);

}  // namespace strata
