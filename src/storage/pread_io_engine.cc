// The pread engine, for kernels without io_uring: a pool of threads, each taking one attempt
// at a time from a shared queue, calling pread, and queuing the raw result for the caller.
// Everything else (short reads, retries, errors, the fault hook) happens on the caller's
// thread in IoEngineBase, exactly as for io_uring; the workers see only descriptors,
// offsets and buffers.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "storage/io_engine_base.h"

namespace strata {

namespace {

class PreadIoEngine final : public IoEngineBase {
 public:
  explicit PreadIoEngine(const IoEngineOptions& options) : IoEngineBase(options) {
    // More threads than reads in flight would only sleep.
    uint32_t threads = std::clamp<uint32_t>(options.pread_threads, 1, depth());
    try {
      for (uint32_t i = 0; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
    } catch (...) {
      StopWorkers();
      throw;
    }
  }

  ~PreadIoEngine() override {
    // Attempts still queued have not touched their buffers and are dropped; a worker in the
    // middle of a pread finishes it before it sees the stop flag, so joining is draining.
    StopWorkers();
  }

  // pread copies into any memory; there is nothing to register, but the contract is the same.
  void RegisterBuffer(std::span<std::byte> arena) override {
    if (outstanding() > 0) {
      throw Error::Internal(fmt::format("RegisterBuffer with {} reads outstanding", outstanding()));
    }
  }

  std::string_view name() const override { return "pread"; }
  bool buffer_registered() const override { return false; }

 private:
  struct Job {
    uint32_t slot;
    int fd;
    uint64_t offset;
    uint32_t length;
    std::byte* buffer;
  };
  struct Result {
    uint32_t slot;
    int result;
  };

  bool StartAttempt(const Attempt& a) override {
    const OpenedFile& f = file(a.file);
    staged_.push_back(Job{a.slot, a.buffered ? f.buffered_fd : f.fd, a.offset, a.length, a.buffer});
    return true;
  }

  void FlushAttempts() override {
    size_t count = staged_.size();
    {
      std::lock_guard<std::mutex> lock(mu_);
      jobs_.insert(jobs_.end(), staged_.begin(), staged_.end());
    }
    staged_.clear();
    if (count == 1) {
      work_cv_.notify_one();
    } else if (count > 1) {
      work_cv_.notify_all();
    }
  }

  void CollectResults(size_t min_results) override {
    {
      std::unique_lock<std::mutex> lock(mu_);
      if (min_results > 0) done_cv_.wait(lock, [&] { return results_.size() >= min_results; });
      collected_.swap(results_);
    }
    for (const Result& r : collected_) HandleResult(r.slot, r.result);
    collected_.clear();
  }

  void WorkerLoop() {
    for (;;) {
      Job job;
      {
        std::unique_lock<std::mutex> lock(mu_);
        work_cv_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
        if (stopping_) return;
        job = jobs_.front();
        jobs_.pop_front();
      }
      ssize_t n = ::pread(job.fd, job.buffer, job.length, static_cast<off_t>(job.offset));
      // Linux caps one read at 0x7ffff000 bytes, so n always fits in an int.
      int result = n >= 0 ? static_cast<int>(n) : -errno;
      {
        std::lock_guard<std::mutex> lock(mu_);
        results_.push_back(Result{job.slot, result});
      }
      done_cv_.notify_one();
    }
  }

  void StopWorkers() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stopping_ = true;
      jobs_.clear();
    }
    work_cv_.notify_all();
    for (std::thread& t : workers_) t.join();
    workers_.clear();
  }

  std::vector<Job> staged_;        // caller's thread only
  std::vector<Result> collected_;  // caller's thread only
  std::mutex mu_;
  std::condition_variable work_cv_;  // jobs_ grew or stopping_
  std::condition_variable done_cv_;  // results_ grew
  std::deque<Job> jobs_;             // guarded by mu_
  std::vector<Result> results_;      // guarded by mu_
  bool stopping_ = false;            // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace

std::unique_ptr<IoEngine> MakePreadIoEngine(const IoEngineOptions& options) {
  return std::make_unique<PreadIoEngine>(options);
}

}  // namespace strata
