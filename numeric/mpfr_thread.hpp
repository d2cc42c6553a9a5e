#pragma once
/// MPFR's per-thread state for threads that ropesim starts (the census workers).
#include <mpfr.h>

namespace ropesim::numeric {

/// Frees the calling thread's MPFR caches when it goes out of scope:
/// `mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE)` (the cached constants such as π and log 2, and the
/// pool of integers, that MPFR keeps in thread-local storage and never frees by itself).
/// Every worker thread the library starts holds one for its whole body, so a finished worker
/// leaves nothing behind (LeakSanitizer reported the caches of every finished census worker:
/// docs/TESTING.md). The caches shared by all threads are untouched, so other threads may keep
/// using MPFR meanwhile. Throws nothing.
class ThreadCacheRelease {
 public:
  ThreadCacheRelease() = default;
  ~ThreadCacheRelease() { mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE); }
  ThreadCacheRelease(const ThreadCacheRelease&) = delete;
  ThreadCacheRelease& operator=(const ThreadCacheRelease&) = delete;
};

}  // namespace ropesim::numeric
