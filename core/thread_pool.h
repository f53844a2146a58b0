// A fixed-size pool of worker threads running queued tasks in FIFO order.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace caffe2 {

class ThreadPool {
 public:
  explicit ThreadPool(int num_threads);
  ~ThreadPool();  // finishes queued tasks, then joins
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  void Run(std::function<void()> task);
  int size() const { return static_cast<int>(workers_.size()); }
  // Number of hardware threads (at least 1).
  static int DefaultSize();

 private:
  void Loop();
  // Wakes every worker, lets it finish the queued tasks and joins it.
  void Stop();
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> workers_;
};

}  // namespace caffe2
