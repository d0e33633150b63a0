#include "common/thread_pool.h"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <new>
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

void ThreadPool::PrepareFork() { shared_pool->mutex_.lock(); }

void ThreadPool::ParentAfterFork() { shared_pool->mutex_.unlock(); }

void ThreadPool::ChildAfterFork() {
  ThreadPool& pool = *shared_pool;
  // Only the forking thread exists in the child: no worker, and no job of another thread.
  // The condition variables may record the parent's sleepers, who do not exist here; they are
  // made anew in place (not destroyed first: destroying one with waiters is undefined).
  new (&pool.work_) std::condition_variable();
  new (&pool.finished_) std::condition_variable();
  pool.queue_.clear();
  pool.workers_ = 0;
  pool.sleeping_ = 0;
  pool.mutex_.unlock();
}

void ThreadPool::StartWorkers(unsigned count) {
  for (unsigned i = 0; i < count; ++i) {
    try {
      std::thread([this] { WorkerLoop(); }).detach();
    } catch (const std::system_error&) {
      return;  // no more threads now (EAGAIN): the callers run the parts themselves
    }
    ++workers_;
  }
}

ThreadPool::Job* ThreadPool::ClaimableJob() { return queue_.empty() ? nullptr : queue_.front(); }

void ThreadPool::RunParts(Job& job, std::unique_lock<std::mutex>& lock) {
  // The job is touched only under the lock: once its last part is counted, its caller may
  // return and destroy it as soon as the lock is released.
  while (job.next < job.parts) {
    const unsigned part = job.next++;
    if (job.next == job.parts) {
      const auto queued = std::find(queue_.begin(), queue_.end(), &job);
      if (queued != queue_.end()) queue_.erase(queued);
    }
    lock.unlock();
    std::exception_ptr error;
    try {
      (*job.part)(part);
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    if (error && !job.error) job.error = error;
    const unsigned done = job.done.load(std::memory_order_relaxed) + 1;
    job.done.store(done, std::memory_order_release);
    if (done == job.parts) finished_.notify_all();
  }
}

void ThreadPool::WorkerLoop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (Job* job = ClaimableJob()) {
      RunParts(*job, lock);
      continue;
    }
    const uint64_t seen = queued_.load(std::memory_order_acquire);
    lock.unlock();
    const bool queued = SpinUntil([&] { return queued_.load(std::memory_order_acquire) != seen; });
    lock.lock();
    if (queued) continue;
    ++sleeping_;
    work_.wait(lock, [&] { return ClaimableJob() != nullptr; });
    --sleeping_;
  }
}

void ThreadPool::Run(unsigned parts, const std::function<void(unsigned)>& part) {
  if (parts == 0) return;
  Job job;
  job.part = &part;
  job.parts = parts;
  std::unique_lock lock(mutex_);
  // Enough workers for every call in flight (a sampler's beside a kernel's) to have its own.
  demand_ += parts - 1;
  const unsigned wanted = std::min(demand_, kMaxWorkers);
  if (workers_ < wanted) StartWorkers(wanted - workers_);
  queue_.push_back(&job);
  queued_.fetch_add(1, std::memory_order_release);
  for (unsigned i = 0; i < std::min(parts - 1, sleeping_); ++i) work_.notify_one();
  RunParts(job, lock);
  if (job.done.load(std::memory_order_relaxed) != parts) {
    lock.unlock();
    SpinUntil([&] { return job.done.load(std::memory_order_acquire) == parts; });
    lock.lock();
    finished_.wait(lock, [&] { return job.done.load(std::memory_order_relaxed) == parts; });
  }
  demand_ -= parts - 1;
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace strata
