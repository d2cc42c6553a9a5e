#include "numeric/parallel.hpp"

#include <algorithm>
#include <cfenv>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
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

/// True on the pool's workers: a parallel_for called from a task runs inline.
thread_local bool t_pool_worker = false;

/// One parallel_for call: the tasks, which of them have been claimed and ended, and the error
/// of the lowest-numbered failing task. Shared by the calling thread and the pool tickets that
/// serve it (a ticket a worker takes after the call has returned finds nothing to claim and
/// never touches `task`).
struct Job {
  const std::function<void(std::size_t)>* task = nullptr;
  std::size_t tasks = 0;
  std::mutex mutex;
  std::condition_variable wake;   // the calling thread waits on it
  std::size_t next = 0;           // the next task to claim
  std::size_t running = 0;        // claimed, not yet ended
  bool failed = false;            // some task threw: claim nothing more
  std::deque<std::size_t> ended;  // ended tasks not yet reported to the calling thread
  std::size_t error_task = 0;     // the lowest failing task, if failed
  std::exception_ptr error;
  std::fenv_t env{};  // the calling thread's floating-point environment
};

/// MPFR's per-thread state a task may change and the next task must not see: the exponent
/// range (captured when the worker starts: MPFR's defaults) and the flags, put back after
/// every task.
class MpfrState {
 public:
  MpfrState() : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {}
  void restore() const {
    mpfr_set_emin(emin_);
    mpfr_set_emax(emax_);
    mpfr_clear_flags();
  }

 private:
  mpfr_exp_t emin_, emax_;
};

/// Claims and runs the job's tasks in index order until none is left or one has failed.
void serve(Job& job, const MpfrState& state) {
  for (;;) {
    std::size_t t = 0;
    {
      const std::lock_guard<std::mutex> lock(job.mutex);
      if (job.failed || job.next >= job.tasks) return;
      t = job.next++;
      ++job.running;
    }
    std::exception_ptr error;
    std::fesetenv(&job.env);  // as a thread started by the caller would inherit it
    try {
      (*job.task)(t);
    } catch (...) {
      error = std::current_exception();
    }
    state.restore();
    {
      const std::lock_guard<std::mutex> lock(job.mutex);
      if (error && (!job.failed || t < job.error_task)) {
        job.error_task = t;
        job.error = error;
      }
      job.failed = job.failed || error != nullptr;
      job.ended.push_back(t);
      --job.running;
    }
    job.wake.notify_one();
  }
}

/// The library's one set of worker threads, started lazily and kept for the process. A
/// parallel_for call posts one ticket per worker it wants; an idle worker takes a ticket and
/// serves that call's job. Workers are added when fewer are idle than a call wants, and joined
/// at exit (each frees its MPFR caches as it ends).
class Pool {
 public:
  static Pool& instance() {
    static Pool pool;
    return pool;
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;
  ~Pool() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) {
      if (w.get_id() == std::this_thread::get_id()) {
        w.detach();  // exit() called from a task: this worker cannot join itself
      } else if (w.joinable()) {
        w.join();
      }
    }
  }

  /// Queues `copies` tickets of `job`, starting workers so that enough are idle to take them
  /// at once. Returns the number of workers the pool has (0: none could be started).
  std::size_t post(const std::shared_ptr<Job>& job, std::size_t copies) {
    std::size_t total = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      const std::size_t waiting = queue_.size();
      const std::size_t available = idle_ > waiting ? idle_ - waiting : 0;
      for (std::size_t k = available; k < copies; ++k) {
        try {
          workers_.emplace_back([this] { work(); });
        } catch (...) {  // no more threads: the workers there are serve the tickets in turn
          break;
        }
      }
      total = workers_.size();
      if (total > 0) {
        for (std::size_t k = 0; k < copies; ++k) queue_.push_back(job);
      }
    }
    wake_.notify_all();
    return total;
  }

  /// The number of workers started so far (for tests of reuse).
  std::size_t size() {
    const std::lock_guard<std::mutex> lock(mutex_);
    return workers_.size();
  }

 private:
  Pool() = default;

  void work() {
    t_pool_worker = true;
    const ThreadCacheRelease release;  // this worker's MPFR caches, when it ends at exit
    const MpfrState state;             // MPFR's defaults, as in every new thread
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ++idle_;
      wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      --idle_;
      if (stop_) return;
      const std::shared_ptr<Job> job = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      serve(*job, state);
      lock.lock();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<Job>> queue_;  // tickets: one worker each
  std::vector<std::thread> workers_;
  std::size_t idle_ = 0;
  bool stop_ = false;
};

void run_inline(std::size_t tasks, const std::function<void(std::size_t)>& task,
                const std::function<void(std::size_t, std::size_t)>& finished) {
  for (std::size_t t = 0; t < tasks; ++t) {
    task(t);
    call_finished(finished, t + 1, t);
  }
}

}  // namespace

void parallel_for(unsigned threads, std::size_t tasks, const std::function<void(std::size_t)>& task,
                  const std::function<void(std::size_t, std::size_t)>& finished) {
  if (threads <= 1 || tasks <= 1 || t_pool_worker) return run_inline(tasks, task, finished);
  auto job = std::make_shared<Job>();
  job->task = &task;
  job->tasks = tasks;
  std::fegetenv(&job->env);
  const std::size_t copies = std::min<std::size_t>(threads, tasks);
  if (Pool::instance().post(job, copies) == 0) return run_inline(tasks, task, finished);
  std::size_t done = 0;
  std::unique_lock<std::mutex> lock(job->mutex);
  for (;;) {
    job->wake.wait(lock, [&] {
      return !job->ended.empty() || (job->running == 0 && (job->failed || job->next >= job->tasks));
    });
    while (!job->ended.empty()) {
      const std::size_t t = job->ended.front();
      job->ended.pop_front();
      ++done;
      lock.unlock();
      call_finished(finished, done, t);
      lock.lock();
    }
    if (job->running == 0 && (job->failed || job->next >= job->tasks)) break;
  }
  // Nothing more is claimed from here on: tickets still queued find the job finished.
  job->next = job->tasks;
  const std::exception_ptr error = job->error;
  lock.unlock();
  if (error) std::rethrow_exception(error);
}

std::size_t pool_workers() { return Pool::instance().size(); }

unsigned resolve_threads(unsigned jobs) {
  if (jobs >= 1) return jobs;
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace ropesim::numeric
