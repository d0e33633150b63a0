#include "common/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <new>
#include <stdexcept>
#include <system_error>
#include <thread>

namespace strata {
namespace {

// How long an idle worker, or a caller waiting for a worker's part, watches before it sleeps:
// longer than the serial work between the calls of a kernel loop, short enough that an idle
// pool does not hold a core.
constexpr auto kSpin = std::chrono::microseconds(100);
// A bound on the workers however many parts calls ask for; parts beyond them are claimed by
// whichever thread is free.
constexpr unsigned kMaxWorkers = 64;
// The claim word's part fields are 16 bits wide.
constexpr unsigned kMaxParts = 0xffff;

uint64_t ClaimWord(uint64_t generation, unsigned parts, unsigned next) {
  return generation << 32 | uint64_t{parts} << 16 | next;
}
unsigned PartsOf(uint64_t claim) { return (claim >> 16) & kMaxParts; }
unsigned NextOf(uint64_t claim) { return claim & kMaxParts; }

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until done() or kSpin has passed; whether done() became true.
template <typename Done>
bool SpinUntil(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return true;
      CpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
  }
}

ThreadPool* shared_pool = nullptr;

}  // namespace

ThreadPool& ThreadPool::Shared() {
  // Never destroyed: detached workers may still be waiting on it while the process exits.
  static ThreadPool* pool = [] {
    shared_pool = new ThreadPool;
    pthread_atfork(&ThreadPool::PrepareFork, &ThreadPool::ParentAfterFork,
                   &ThreadPool::ChildAfterFork);
    return shared_pool;
  }();
  return *pool;
}

void ThreadPool::PrepareFork() {
  shared_pool->start_mutex_.lock();
  shared_pool->sleep_mutex_.lock();
}

void ThreadPool::ParentAfterFork() {
  shared_pool->sleep_mutex_.unlock();
  shared_pool->start_mutex_.unlock();
}

void ThreadPool::ChildAfterFork() {
  ThreadPool& pool = *shared_pool;
  // Only the forking thread exists in the child: no worker, and no call of another thread.
  // The slots' mutexes and condition variables may record the parent's threads, who do not
  // exist here; they are made anew in place (not destroyed first: destroying one with waiters
  // is undefined). A held slot's next call starts a new generation.
  new (&pool.wake_) std::condition_variable();
  for (Slot& slot : pool.slots_) {
    new (&slot.mutex) std::mutex();
    new (&slot.done) std::condition_variable();
  }
  pool.open_.store(0);
  pool.free_.store(~0ull);
  pool.demand_.store(0);
  pool.sleeping_.store(0);
  pool.workers_.store(0);
  pool.sleep_mutex_.unlock();
  pool.start_mutex_.unlock();
}

void ThreadPool::StartWorkers(unsigned wanted) {
  std::lock_guard lock(start_mutex_);
  while (workers_.load(std::memory_order_relaxed) < wanted) {
    try {
      std::thread([this] { WorkerLoop(); }).detach();
    } catch (const std::system_error&) {
      return;  // no more threads now (EAGAIN): the callers run the parts themselves
    }
    workers_.fetch_add(1, std::memory_order_relaxed);
  }
}

bool ThreadPool::RunPart(unsigned index) {
  Slot& slot = slots_[index];
  uint64_t claim = slot.claim.load(std::memory_order_acquire);
  unsigned parts = 0, next = 0;
  do {
    parts = PartsOf(claim);
    next = NextOf(claim);
    if (next >= parts) return false;
  } while (!slot.claim.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel,
                                             std::memory_order_acquire));
  // The last claim takes the slot out of the workers' scans. Its call cannot return, nor the
  // slot hold another call, before this part is counted below.
  if (next + 1 == parts) open_.fetch_and(~(uint64_t{1} << index), std::memory_order_relaxed);
  try {
    (*slot.part.load(std::memory_order_relaxed))(next);
  } catch (...) {
    if (!slot.failed.test_and_set(std::memory_order_relaxed)) {
      slot.error = std::current_exception();
    }
  }
  if (slot.finished.fetch_add(1, std::memory_order_acq_rel) + 1 == parts) {
    // The slot may already hold a later call, whose caller then wakes to find its own count.
    std::lock_guard lock(slot.mutex);
    slot.done.notify_one();
  }
  return true;
}

bool ThreadPool::RunAnyPart() {
  for (uint64_t open = open_.load(std::memory_order_acquire); open != 0; open &= open - 1) {
    if (RunPart(std::countr_zero(open))) return true;
  }
  return false;
}

void ThreadPool::WorkerLoop() {
  for (;;) {
    if (RunAnyPart()) continue;
    if (SpinUntil([&] { return open_.load(std::memory_order_relaxed) != 0; })) continue;
    std::unique_lock lock(sleep_mutex_);
    sleeping_.fetch_add(1);
    wake_.wait(lock, [&] { return open_.load() != 0; });
    sleeping_.fetch_sub(1);
  }
}

void ThreadPool::Run(unsigned parts, const std::function<void(unsigned)>& part) {
  if (parts == 0) return;
  if (parts == 1) return part(0);
  if (parts > kMaxParts) throw std::length_error("ThreadPool::Run: more than 65,535 parts");
  // Enough workers for every call in flight (a sampler's beside a kernel's) to have its own.
  struct Demand {  // this call's, withdrawn however the call ends
    std::atomic<unsigned>& total;
    const unsigned wanted;
    ~Demand() { total.fetch_sub(wanted, std::memory_order_relaxed); }
  } demand{demand_, parts - 1};
  const unsigned wanted = std::min(
      demand_.fetch_add(demand.wanted, std::memory_order_relaxed) + demand.wanted, kMaxWorkers);
  if (workers_.load(std::memory_order_relaxed) < wanted) StartWorkers(wanted);

  uint64_t free = free_.load(std::memory_order_acquire);
  while (free != 0 &&
         !free_.compare_exchange_weak(free, free & (free - 1), std::memory_order_acquire)) {
  }
  if (free == 0) {  // every slot held: the caller runs the parts
    std::exception_ptr error;
    for (unsigned p = 0; p < parts; ++p) {
      try {
        part(p);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    if (error) std::rethrow_exception(error);
    return;
  }
  const unsigned index = std::countr_zero(free);
  const uint64_t bit = uint64_t{1} << index;
  Slot& slot = slots_[index];
  slot.part.store(&part, std::memory_order_relaxed);
  slot.finished.store(0, std::memory_order_relaxed);
  slot.failed.clear(std::memory_order_relaxed);
  slot.error = nullptr;
  // The bit before the claim word: a worker that claims this call's last part, and clears the
  // bit, has then read a word stored after the bit was set. The other way round, a worker
  // scanning a stale mask could clear it first, and the bit would stay set with nothing to
  // claim, keeping every idle worker spinning.
  open_.fetch_or(bit);
  const uint64_t generation = (slot.claim.load(std::memory_order_relaxed) >> 32) + 1;
  slot.claim.store(ClaimWord(generation, parts, 0), std::memory_order_release);
  if (const unsigned sleeping = sleeping_.load(); sleeping > 0) {
    std::lock_guard lock(sleep_mutex_);
    for (unsigned i = std::min(parts - 1, sleeping); i > 0; --i) wake_.notify_one();
  }
  while (RunPart(index)) {
  }
  auto finished = [&] { return slot.finished.load(std::memory_order_acquire) == parts; };
  if (!finished() && !SpinUntil(finished)) {
    std::unique_lock lock(slot.mutex);
    slot.done.wait(lock, finished);
  }
  std::exception_ptr error = std::move(slot.error);
  slot.error = nullptr;
  free_.fetch_or(bit, std::memory_order_release);
  if (error) std::rethrow_exception(error);
}

}  // namespace strata
