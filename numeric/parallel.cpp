#include "numeric/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "numeric/mpfr_thread.hpp"

namespace ropesim::numeric {

namespace {

void call_finished(const std::function<void(std::size_t, std::size_t)>& finished, std::size_t done,
                   std::size_t task) {
  if (!finished) return;
  try {
    finished(done, task);
  } catch (...) {  // a progress display must not abort the computation
  }
}

}  // namespace

void parallel_for(unsigned threads, std::size_t tasks, const std::function<void(std::size_t)>& task,
                  const std::function<void(std::size_t, std::size_t)>& finished) {
  if (threads <= 1 || tasks <= 1) {
    for (std::size_t t = 0; t < tasks; ++t) {
      task(t);
      call_finished(finished, t + 1, t);
    }
    return;
  }
  std::vector<std::exception_ptr> errors(tasks);
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::size_t> ended;  // finished tasks not yet reported (guarded by mutex)
  std::size_t running_workers = 0;

  auto worker = [&]() {
    const ThreadCacheRelease release;  // this thread's MPFR caches, at its end
    for (;;) {
      if (failed.load()) break;
      const std::size_t t = next.fetch_add(1);
      if (t >= tasks) break;
      try {
        task(t);
      } catch (...) {
        errors[t] = std::current_exception();
        failed.store(true);
      }
      {
        const std::lock_guard<std::mutex> lock(mutex);
        ended.push_back(t);
      }
      wake.notify_one();
    }
    {
      const std::lock_guard<std::mutex> lock(mutex);
      --running_workers;
    }
    wake.notify_one();
  };

  const std::size_t count = std::min<std::size_t>(threads, tasks);
  std::vector<std::thread> pool;
  pool.reserve(count);
  running_workers = count;
  for (std::size_t k = 0; k < count; ++k) {
    try {
      pool.emplace_back(worker);
    } catch (...) {  // could not start a thread: the others (or this thread) do its share
      const std::lock_guard<std::mutex> lock(mutex);
      running_workers -= count - k;
      break;
    }
  }
  std::size_t done = 0;
  {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      wake.wait(lock, [&] { return !ended.empty() || running_workers == 0; });
      while (!ended.empty()) {
        const std::size_t t = ended.front();
        ended.pop_front();
        ++done;
        lock.unlock();
        call_finished(finished, done, t);
        lock.lock();
      }
      if (running_workers == 0) break;
    }
  }
  for (auto& th : pool) th.join();
  // No thread could be started at all: run what is left here.
  if (pool.empty()) {
    for (std::size_t t = next.load(); t < tasks && !failed.load(); ++t) {
      try {
        task(t);
      } catch (...) {
        errors[t] = std::current_exception();
        failed.store(true);
      }
      call_finished(finished, ++done, t);
    }
  }
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

unsigned resolve_threads(unsigned jobs) {
  if (jobs >= 1) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ropesim::numeric
