// ThreadPool runs the parts of a parallel loop on threads that are started once and kept, so a
// kernel called thousands of times an epoch (the full-graph input products, once per input
// group) does not pay a thread's start and join each time: about 35 µs a call on the 2-core
// machine, more than the work of many calls.
//
// A call's parts are claimed with one compare-and-swap each, in a slot the pool owns, and no
// lock is taken on the way: with one mutex, every spinning worker queued on it at every call.
// (On a 16-vCPU machine that took the full-graph GCN epoch from 3.76 to 3.45 s on 16 threads,
// and from about 2.0 to 1.6 s on 2; it still took 1.45 s on 4: docs/training.md#threads.)
//
// Invariants: Run(parts, fn) returns once fn(p) has returned for every p in [0, parts), each
// called exactly once; which thread runs a part never matters to the caller. The caller claims
// parts from the same counter as the workers, so a call completes on the caller's thread alone
// when every worker is busy (nested or concurrent calls), none could be started, or every slot
// is held. Workers spin briefly before they sleep, so back-to-back calls find them awake. A
// process may fork outside Run (the child starts workers of its own), not from inside a part.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
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
  // first exception a part threw, after every part has finished. At most 65,535 parts.
  void Run(unsigned parts, const std::function<void(unsigned)>& part);

  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

 private:
  // One call's parts. The pool owns the slots, so a worker that looks at a slot after its call
  // has returned reads memory that still exists, and finds nothing to claim there.
  struct Slot {
    // generation << 32 | parts << 16 | next part to claim. A claim swaps in next + 1 and fails
    // once the slot holds a later call (a new generation), so a worker never runs a part of a
    // call other than the one whose word it read.
    alignas(64) std::atomic<uint64_t> claim{0};
    std::atomic<const std::function<void(unsigned)>*> part{nullptr};
    // Parts that have returned or thrown: on a line of its own, apart from the claims.
    alignas(64) std::atomic<unsigned> finished{0};
    std::atomic_flag failed;       // set by the first part that threw
    std::exception_ptr error;      // its exception (written before its part is counted)
    std::mutex mutex;              // with `done`, for a caller that sleeps
    std::condition_variable done;  // the last part finished
  };
  static constexpr unsigned kSlots = 64;

  ThreadPool() = default;
  // Claims and runs one part of slot `index`'s call; false when none is left to claim.
  bool RunPart(unsigned index);
  // Runs one part of any call with parts left; false when there was none.
  bool RunAnyPart();
  void WorkerLoop();
  void StartWorkers(unsigned wanted);
  // pthread_atfork's handlers: the pool's mutexes are held across fork(), and a child, which has
  // none of the parent's workers or calls, starts afresh.
  static void PrepareFork();
  static void ParentAfterFork();
  static void ChildAfterFork();

  std::array<Slot, kSlots> slots_;
  // Bit i: slot i's call may have parts left to claim. What idle workers poll, on a line apart
  // from the counters each call writes.
  alignas(64) std::atomic<uint64_t> open_{0};
  alignas(64) std::atomic<uint64_t> free_{~0ull};  // bit i: no call holds slot i
  std::atomic<unsigned> demand_{0};                // parts - 1 summed over the calls in flight

  std::mutex sleep_mutex_;        // with `wake_`, for workers that sleep
  std::condition_variable wake_;  // a call opened
  std::atomic<unsigned> sleeping_{0};

  std::mutex start_mutex_;  // guards workers_
  std::atomic<unsigned> workers_{0};
};

}  // namespace strata
