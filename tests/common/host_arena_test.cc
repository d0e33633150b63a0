#include "common/host_arena.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "strata/error.h"
#include "strata/row_buffer.h"

namespace strata {
namespace {

TEST(HostArena, ChargesItsRegionOnceAndReusesFreedPieces) {
  MemoryBudget budget(1 << 20);
  HostArena arena(budget, 4096, "test region");
  EXPECT_EQ(budget.used(), 4096u);
  std::atomic<bool> stop{false};
  const std::optional<uint64_t> a = arena.Allocate(1000, stop);
  const std::optional<uint64_t> b = arena.Allocate(1000, stop);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*a, 0u);
  EXPECT_EQ(*b, 1024u);  // pieces are 64-byte aligned
  EXPECT_EQ(arena.used_bytes(), 2048u);
  arena.Free(*a, 1000);
  EXPECT_EQ(*arena.Allocate(64, stop), 0u);  // first fit reuses the freed front
  EXPECT_EQ(budget.used(), 4096u);
}

TEST(HostArena, FreedNeighboursCoalesceIntoOneExtent) {
  constexpr uint64_t kPage = 4096;
  MemoryBudget budget(1 << 20);
  HostArena arena(budget, 3 * kPage, "test region");
  std::atomic<bool> stop{false};
  const uint64_t a = *arena.Allocate(kPage, stop);
  const uint64_t b = *arena.Allocate(kPage, stop);
  const uint64_t c = *arena.Allocate(kPage, stop);
  EXPECT_FALSE(arena.CanAllocate(64));
  // Freed out of order: a and c first, then b joins all three into one extent.
  arena.Free(a, kPage);
  arena.Free(c, kPage);
  EXPECT_FALSE(arena.CanAllocate(2 * kPage));
  arena.Free(b, kPage);
  EXPECT_TRUE(arena.CanAllocate(3 * kPage));
  EXPECT_EQ(arena.used_bytes(), 0u);
  EXPECT_EQ(arena.peak_bytes(), 3 * kPage);
}

TEST(HostArena, TheRegionIsWholePagesPageAligned) {
  MemoryBudget budget(1 << 20);
  HostArena arena(budget, 5000, "test region");
  EXPECT_EQ(arena.size_bytes(), 8192u);
  EXPECT_EQ(budget.used(), 8192u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(arena.base()) % 4096, 0u);
}

TEST(HostArena, AllocateWaitsForRoomAndStopsWhenAsked) {
  MemoryBudget budget(1 << 20);
  HostArena arena(budget, 4096, "test region");
  std::atomic<bool> stop{false};
  const uint64_t held = *arena.Allocate(4096, stop);
  std::thread consumer([&] {
    while (arena.blocked_ns() == 0) std::this_thread::yield();
    arena.Free(held, 4096);
  });
  EXPECT_EQ(arena.Allocate(2048, stop), std::optional<uint64_t>(0));
  consumer.join();
  EXPECT_EQ(arena.blocked_ns(), 0u);
  std::thread stopper([&] {
    while (arena.blocked_ns() == 0) std::this_thread::yield();
    stop = true;
  });
  EXPECT_FALSE(arena.Allocate(4096, stop).has_value());
  stopper.join();
}

TEST(HostArena, APieceLargerThanTheRegionIsAnInputError) {
  MemoryBudget budget(1 << 20);
  HostArena arena(budget, 4096, "pinned batch buffers");
  std::atomic<bool> stop{false};
  try {
    arena.Allocate(8192, stop);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), Error::Kind::kInput);
    EXPECT_NE(std::string(e.what()).find("pinned batch buffers"), std::string::npos);
  }
}

TEST(RowBuffer, AnArenaPieceReturnsOnDestructionAndMovesOnce) {
  MemoryBudget budget(1 << 20);
  HostArena arena(budget, 4096, "test region");
  std::atomic<bool> stop{false};
  {
    std::optional<RowBuffer> rows = RowBuffer::Allocate(budget, &arena, 100, stop);
    ASSERT_TRUE(rows.has_value());
    EXPECT_TRUE(rows->in_arena());
    EXPECT_EQ(reinterpret_cast<std::byte*>(rows->data()), arena.base());
    RowBuffer moved = std::move(*rows);
    EXPECT_EQ(rows->data(), nullptr);
    EXPECT_EQ(moved.size(), 100u);
    EXPECT_EQ(arena.used_bytes(), 448u);
  }
  EXPECT_EQ(arena.used_bytes(), 0u);
  // Without an arena the rows are an array of their own, charged while they live.
  const uint64_t before = budget.used();
  {
    std::optional<RowBuffer> rows = RowBuffer::Allocate(budget, nullptr, 100, stop);
    EXPECT_FALSE(rows->in_arena());
    EXPECT_EQ(budget.used(), before + 400);
  }
  EXPECT_EQ(budget.used(), before);
}

}  // namespace
}  // namespace strata
