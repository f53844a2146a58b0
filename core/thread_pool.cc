#include "core/thread_pool.h"

#include <algorithm>
#include <system_error>

#include "core/enforce.h"

namespace caffe2 {

ThreadPool::ThreadPool(int num_threads) {
  const int n = std::max(1, num_threads);
  try {
    for (int i = 0; i < n; ++i) workers_.emplace_back([this] { Loop(); });
  } catch (const std::system_error& e) {
    // Stop the threads that did start: a vector of joinable threads must not be destroyed.
    const size_t started = workers_.size();
    Stop();
    C2_THROW("Cannot start ", n, " worker threads: thread ", started + 1, " failed (", e.what(),
             "); ask for fewer (num_workers)");
  }
}

void ThreadPool::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& t : workers_) t.join();
  workers_.clear();
}

ThreadPool::~ThreadPool() { Stop(); }

void ThreadPool::Run(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
}

int ThreadPool::DefaultSize() {
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void ThreadPool::Loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    task();
  }
}

}  // namespace caffe2
