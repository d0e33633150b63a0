#include "common/thread_pool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

#include "common/parallel.h"

namespace strata {
namespace {

// Runs `parts` parts and returns how many times each ran.
std::vector<int> RunCounts(unsigned parts) {
  std::vector<std::atomic<int>> runs(parts);
  ThreadPool::Shared().Run(parts, [&](unsigned p) { runs[p].fetch_add(1); });
  std::vector<int> counts;
  for (auto& r : runs) counts.push_back(r.load());
  return counts;
}

TEST(ThreadPool, RunsEveryPartOnce) {
  for (unsigned parts = 1; parts <= 9; ++parts) {
    for (int repeat = 0; repeat < 200; ++repeat) {
      ASSERT_EQ(RunCounts(parts), std::vector<int>(parts, 1)) << parts << " parts";
    }
  }
  // More parts than the pool has workers: the free threads claim the rest.
  EXPECT_EQ(RunCounts(100), std::vector<int>(100, 1));
}

TEST(ThreadPool, PartsRunOnSeveralThreadsWhenTheyWait) {
  // Two parts that each wait for the other can only finish on two threads.
  std::atomic<int> arrived{0};
  ThreadPool::Shared().Run(2, [&](unsigned) {
    arrived.fetch_add(1);
    while (arrived.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(arrived.load(), 2);
}

TEST(ThreadPool, NestedAndConcurrentCallsComplete) {
  std::atomic<uint64_t> sum{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([&] {
      for (int repeat = 0; repeat < 50; ++repeat) {
        ParallelFor(3, 30, [&](uint64_t begin, uint64_t end) {
          for (uint64_t i = begin; i < end; ++i) {
            ParallelFor(2, 10, [&](uint64_t b, uint64_t e) { sum.fetch_add(e - b); });
          }
        });
      }
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(sum.load(), 4u * 50 * 30 * 10);
}

TEST(ThreadPool, CallsBeyondItsSlotsRunOnTheirCallers) {
  // 80 calls in flight at once, more than the pool's 64 slots, each held open until all have
  // started a part: those without a slot run their parts on their own threads.
  constexpr int kCallers = 80;
  std::atomic<int> started{0};
  std::atomic<int> parts_run{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&] {
      std::atomic<bool> first{true};
      ThreadPool::Shared().Run(2, [&](unsigned) {
        if (first.exchange(false)) {
          started.fetch_add(1);
          while (started.load() < kCallers) std::this_thread::yield();
        }
        parts_run.fetch_add(1);
      });
    });
  }
  for (auto& caller : callers) caller.join();
  EXPECT_EQ(parts_run.load(), 2 * kCallers);
  EXPECT_EQ(RunCounts(3), std::vector<int>(3, 1));
}

TEST(ThreadPool, RefusesMorePartsThanItCounts) {
  EXPECT_THROW(ThreadPool::Shared().Run(65536, [](unsigned) {}), std::length_error);
  EXPECT_EQ(RunCounts(65535), std::vector<int>(65535, 1));
}

TEST(ThreadPool, RethrowsAfterEveryPartFinished) {
  std::atomic<int> finished{0};
  EXPECT_THROW(ThreadPool::Shared().Run(4,
                                        [&](unsigned p) {
                                          if (p == 1) throw std::runtime_error("part 1");
                                          std::this_thread::sleep_for(std::chrono::milliseconds(5));
                                          finished.fetch_add(1);
                                        }),
               std::runtime_error);
  EXPECT_EQ(finished.load(), 3);
  EXPECT_EQ(RunCounts(4), std::vector<int>(4, 1));  // the pool is still usable
}

TEST(ThreadPool, AForkedChildRunsItsOwnParts) {
#if defined(STRATA_TSAN_BUILD)
  GTEST_SKIP() << "ThreadSanitizer cannot start threads in the child of a multi-threaded fork";
#endif
  RunCounts(4);  // the parent has workers
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(60);  // a deadlocked child ends instead of hanging the suite
    uint64_t sum = 0;
    std::atomic<uint64_t> parts_sum{0};
    ParallelFor(4, 1000, [&](uint64_t begin, uint64_t end) {
      uint64_t s = 0;
      for (uint64_t i = begin; i < end; ++i) s += i;
      parts_sum.fetch_add(s);
    });
    for (uint64_t i = 0; i < 1000; ++i) sum += i;
    ::_exit(parts_sum.load() == sum ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace strata
