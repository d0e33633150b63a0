#include "common/bounded_queue.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace strata {
namespace {

TEST(BoundedQueue, DeliversEveryItemInOrderAcrossThreads) {
  BoundedQueue<int> queue(3);
  std::thread producer([&] {
    for (int i = 0; i < 10000; ++i) ASSERT_TRUE(queue.Push(i));
    queue.Close();
  });
  int expected = 0;
  while (auto item = queue.Pop()) {
    ASSERT_EQ(*item, expected++);
    ASSERT_LE(queue.size(), 3u);
  }
  producer.join();
  EXPECT_EQ(expected, 10000);
}

TEST(BoundedQueue, CloseWithErrorSurfacesInTheConsumer) {
  BoundedQueue<int> queue(2);
  queue.Push(1);
  queue.Close(std::make_exception_ptr(std::runtime_error("stage failed")));
  EXPECT_THROW(queue.Pop(), std::runtime_error);
  EXPECT_FALSE(queue.Push(2));
}

TEST(BoundedQueue, CloseWakesABlockedProducer) {
  BoundedQueue<int> queue(1);
  queue.Push(1);
  std::thread producer([&] { EXPECT_FALSE(queue.Push(2)); });
  queue.Close();
  producer.join();
}

TEST(BoundedQueue, PopForTimesOutOnAnOpenEmptyQueue) {
  BoundedQueue<int> queue(1);
  bool timed_out = false;
  EXPECT_FALSE(queue.PopFor(std::chrono::milliseconds(1), timed_out).has_value());
  EXPECT_TRUE(timed_out);
  queue.Push(7);
  EXPECT_EQ(queue.PopFor(std::chrono::milliseconds(1), timed_out), 7);
  EXPECT_FALSE(timed_out);
  queue.Close();
  EXPECT_FALSE(queue.PopFor(std::chrono::milliseconds(1), timed_out).has_value());
  EXPECT_FALSE(timed_out);
}

}  // namespace
}  // namespace strata
