#include "common/task_thread.h"

#include <utility>

namespace strata {

TaskThread::~TaskThread() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void TaskThread::Enqueue(std::function<void()> task) {
  {
    std::lock_guard lock(mutex_);
    // Started before the task is queued: when a thread cannot start, Submit throws and nothing
    // is left queued to run, unasked, before a later task.
    if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
    tasks_.push_back(std::move(task));
  }
  queued_.notify_one();
}

void TaskThread::Loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    queued_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;  // stopping, and every task has run
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();  // a packaged_task: its exception goes to its future
    lock.lock();
  }
}

}  // namespace strata
