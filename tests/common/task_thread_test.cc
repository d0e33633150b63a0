#include "common/task_thread.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace strata {
namespace {

TEST(TaskThread, RunsTasksInOrderOnOneThread) {
  TaskThread worker;
  std::vector<int> order;
  std::vector<std::future<std::thread::id>> ids;
  for (int i = 0; i < 100; ++i) {
    ids.push_back(worker.Submit([&order, i] {
      order.push_back(i);  // one thread: no race
      return std::this_thread::get_id();
    }));
  }
  const std::thread::id first = ids[0].get();
  EXPECT_NE(first, std::this_thread::get_id());
  for (size_t i = 1; i < ids.size(); ++i) EXPECT_EQ(ids[i].get(), first);
  std::vector<int> expected(100);
  for (int i = 0; i < 100; ++i) expected[i] = i;
  EXPECT_EQ(order, expected);
}

TEST(TaskThread, AnExceptionReachesItsFutureAndLaterTasksRun) {
  TaskThread worker;
  auto failed = worker.Submit([]() -> int { throw std::runtime_error("transfer failed"); });
  auto next = worker.Submit([] { return 7; });
  EXPECT_THROW(failed.get(), std::runtime_error);
  EXPECT_EQ(next.get(), 7);
}

TEST(TaskThread, DestructionWaitsForEveryTask) {
  std::atomic<int> ran{0};
  {
    TaskThread worker;
    for (int i = 0; i < 5; ++i) {
      worker.Submit([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
        ran.fetch_add(1);
      });
    }
  }
  EXPECT_EQ(ran.load(), 5);
}

}  // namespace
}  // namespace strata
