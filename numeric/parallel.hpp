#pragma once
/// Independent tasks on worker threads with a deterministic outcome: the one thread pool of the
/// library (the census's position tasks, its distinct counts, fingerprint sort and
/// verification, the candidates C of `C = auto`, the rows of `ropesim table horizon`; no other
/// file starts threads). Results are written by the tasks into slots indexed by the task,
/// so they never depend on the thread count or on which thread finished first.
#include <cstddef>
#include <functional>

namespace ropesim::numeric {

/// Runs task(0), ..., task(tasks − 1), each exactly once, on up to `threads` threads, and
/// returns when all have finished.
///
/// - threads ≤ 1 or tasks ≤ 1: the tasks run on the calling thread, in order. So does a call
///   made from inside a task (a nested call never waits for the workers it runs on).
/// - Otherwise min(threads, tasks) workers of the library's persistent pool take the tasks in
///   increasing order of index. The workers are started on first use and kept for the
///   process (more are started when a call finds fewer idle than it wants, e.g. concurrent
///   calls from several threads; none is ever stopped before exit). The calling thread only
///   waits and calls `finished(done, task)` after each task ends (in the order they end;
///   `done` counts the finished tasks), so a progress display stays on the calling thread.
/// - Per-thread numeric state: each worker holds a numeric::ThreadCacheRelease (MPFR's
///   thread-local caches live as long as the worker and are freed when it ends at exit).
///   Every task starts with MPFR's default exponent range and cleared MPFR flags (the worker
///   puts them back after each task, so no task sees another's; the engines also set and
///   restore the exponent range around each operation: numeric/mpfr_util.hpp,
///   detail::ExponentRange), and with the calling thread's floating-point environment
///   (rounding mode, exception flags), as a thread it started would inherit.
/// - Errors: once a task throws, no further task is started; when all running tasks have
///   ended, the exception of the lowest-numbered failing task is rethrown. That is the error
///   the sequential run would have thrown first (tasks are started in index order, so every
///   task before it has run), whatever the thread count.
/// `finished` must not throw (exceptions from it are ignored). The tasks must be safe to run
/// concurrently (each writes its own slot). If no worker thread can be started at all, the
/// tasks run on the calling thread in order.
void parallel_for(unsigned threads, std::size_t tasks, const std::function<void(std::size_t)>& task,
                  const std::function<void(std::size_t done, std::size_t task)>& finished = {});

/// The number of worker threads the pool has started so far in this process (0 before the
/// first parallel_for that needs one). Workers are reused: repeated calls with the same
/// thread count do not raise it.
std::size_t pool_workers();

/// The thread count of `jobs`: `jobs` itself if ≥ 1, else every core the system reports
/// (std::thread::hardware_concurrency, at least 1).
unsigned resolve_threads(unsigned jobs);

}  // namespace ropesim::numeric
