// ThreadPool runs the parts of a parallel loop on threads that are started once and kept, so a
// kernel called thousands of times an epoch (the full-graph input products run per row group of
// 128) does not pay a thread's start and join each time: about 35 µs a call on the 2-core
// machine, more than the work of many calls.
//
// Invariants: Run(parts, fn) returns once fn(p) has returned for every p in [0, parts), each
// called exactly once; which thread runs a part never matters to the caller. The caller claims
// parts from the same counter as the workers, so a call completes on the caller's thread alone
// when every worker is busy (nested or concurrent calls) or none could be started. Workers
// spin briefly before they sleep, so back-to-back calls find them awake. A process may fork
// outside Run (the child starts workers of its own), not from inside a part.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>

namespace strata {

class ThreadPool {
 public:
  // The process's pool, its workers started on demand (as many as the calls in flight have
  // asked for beyond their callers, at most 64) and kept until the process ends.
  static ThreadPool& Shared();

  // Calls part(p) for p in [0, parts), on the caller and up to parts - 1 workers; rethrows the
  // first exception a part threw, after every part has finished.
  void Run(unsigned parts, const std::function<void(unsigned)>& part);

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

 private:
  struct Job {
    const std::function<void(unsigned)>* part = nullptr;
    unsigned parts = 0;
    unsigned next = 0;              // the next part to claim (under mutex_)
    std::atomic<unsigned> done{0};  // parts finished (written under mutex_)
    std::exception_ptr error;       // the first (under mutex_)
  };

  ThreadPool() = default;
  void StartWorkers(unsigned count);  // under mutex_
  void WorkerLoop();
  // Claims and runs parts of `job` until none is left to claim; `lock` holds mutex_ on entry
  // and on return.
  void RunParts(Job& job, std::unique_lock<std::mutex>& lock);
  Job* ClaimableJob();  // the oldest queued job with a part left, or null (under mutex_)
  // pthread_atfork's handlers: the mutex is held across fork(), and a child, which has none of
  // the parent's workers, starts its own.
  static void PrepareFork();
  static void ParentAfterFork();
  static void ChildAfterFork();

  std::mutex mutex_;
  std::condition_variable work_;      // a job was queued
  std::condition_variable finished_;  // a job's last part finished
  std::deque<Job*> queue_;            // jobs with parts left to claim
  std::atomic<uint64_t> queued_{0};   // jobs ever queued: what spinning workers watch
  unsigned workers_ = 0;
  unsigned sleeping_ = 0;
  unsigned demand_ = 0;  // parts - 1 summed over the calls in flight
};

}  // namespace strata
