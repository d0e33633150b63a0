// BoundedQueue joins two pipeline stages: a fixed number of items in flight, Push blocks
// while it is full and Pop while it is empty, and Close ends the stream — Pop then drains
// what is left and returns nullopt; Push after Close is refused. A stage that fails closes
// its queues with the error, which the next Pop rethrows, so a failure anywhere surfaces in
// the thread that consumes the pipeline instead of hanging it.
//
// Thread safety: any number of producers and consumers.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>

namespace strata {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}

  // Returns false when the queue was closed (the item is dropped).
  bool Push(T item) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // The next item; nullopt once the queue is closed and drained. Rethrows a Close error.
  std::optional<T> Pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (error_) std::rethrow_exception(error_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // Pop, calling `poll` after every `slice` spent waiting; `poll` may throw to give up.
  template <typename Duration, typename Poll>
  std::optional<T> PopPolling(Duration slice, const Poll& poll) {
    while (true) {
      bool timed_out = false;
      std::optional<T> item = PopFor(slice, timed_out);
      if (!timed_out) return item;
      poll();
    }
  }

  // Like Pop, but gives up after `timeout` (nullopt with the queue still open), so that a
  // consumer can look at other things — an interrupt — while it waits.
  template <typename Duration>
  std::optional<T> PopFor(Duration timeout, bool& timed_out) {
    std::unique_lock lock(mutex_);
    timed_out = !not_empty_.wait_for(lock, timeout, [&] { return closed_ || !items_.empty(); });
    if (timed_out) return std::nullopt;
    if (error_) std::rethrow_exception(error_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  // The next item if one is ready, without waiting; nullopt otherwise (also once closed and
  // drained — closed() tells the two apart). Rethrows a Close error.
  std::optional<T> TryPop() {
    std::lock_guard lock(mutex_);
    if (error_) std::rethrow_exception(error_);
    if (items_.empty()) return std::nullopt;
    T item = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

  void Close(std::exception_ptr error = nullptr) {
    std::lock_guard lock(mutex_);
    closed_ = true;
    if (error && !error_) error_ = error;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
  std::exception_ptr error_;
};

}  // namespace strata
