// numeric::parallel_for: every task once, progress on the calling thread, and the error of the
// lowest-numbered failing task whatever the thread count; the persistent pool (workers reused
// across calls, nested calls inline, per-task MPFR and floating-point state, concurrent callers).
#include <mpfr.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <cfenv>
#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "numeric/parallel.hpp"

using ropesim::numeric::parallel_for;

TEST_CASE("parallel_for runs every task once and reports each end on the calling thread",
          "[numeric][parallel]") {
  for (unsigned threads : {1u, 2u, 3u, 8u}) {
    INFO(threads);
    const std::size_t n = 200;
    std::vector<std::atomic<int>> runs(n);
    std::vector<std::uint64_t> square(n, 0);
    std::vector<std::size_t> done_seen;
    std::vector<int> reported(n, 0);
    const auto caller = std::this_thread::get_id();
    bool on_caller = true;
    parallel_for(
        threads, n,
        [&](std::size_t t) {
          runs[t].fetch_add(1);
          square[t] = static_cast<std::uint64_t>(t) * t;
        },
        [&](std::size_t done, std::size_t t) {
          on_caller = on_caller && std::this_thread::get_id() == caller;
          done_seen.push_back(done);
          ++reported[t];
        });
    std::uint64_t sum = 0;
    for (std::size_t t = 0; t < n; ++t) {
      CHECK(runs[t].load() == 1);
      CHECK(reported[t] == 1);
      sum += square[t];
    }
    CHECK(sum == 199ull * 200 * 399 / 6);  // sum of t^2 for t < 200
    CHECK(on_caller);
    REQUIRE(done_seen.size() == n);
    for (std::size_t i = 0; i < n; ++i) CHECK(done_seen[i] == i + 1);
  }
}

TEST_CASE("parallel_for rethrows the lowest-numbered failing task's error", "[numeric][parallel]") {
  for (unsigned threads : {1u, 2u, 4u}) {
    INFO(threads);
    try {
      parallel_for(threads, 100, [](std::size_t t) {
        if (t == 37 || t == 38 || t == 90) throw std::runtime_error("task " + std::to_string(t));
      });
      FAIL("no exception");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "task 37");
    }
  }
}

TEST_CASE("parallel_for with one thread runs the tasks in order on the calling thread",
          "[numeric][parallel]") {
  std::vector<std::size_t> order;
  const auto caller = std::this_thread::get_id();
  bool on_caller = true;
  parallel_for(1, 5, [&](std::size_t t) {
    order.push_back(t);
    on_caller = on_caller && std::this_thread::get_id() == caller;
  });
  CHECK(order == std::vector<std::size_t>{0, 1, 2, 3, 4});
  CHECK(on_caller);
  CHECK(ropesim::numeric::resolve_threads(3) == 3);
  CHECK(ropesim::numeric::resolve_threads(0) >= 1);
}

TEST_CASE("parallel_for reuses its workers across calls", "[numeric][parallel]") {
  // Every task counts the tasks its thread has run so far (thread_local). Threads started per
  // call would each run at most `tasks` = 8 tasks; persistent workers run all 1600 of the 200
  // calls between them.
  const std::size_t calls = 200, tasks = 8;
  std::atomic<std::size_t> most{0};
  std::vector<std::size_t> pool_sizes;
  for (std::size_t c = 0; c < calls; ++c) {
    std::vector<int> slot(tasks, 0);
    parallel_for(2, tasks, [&](std::size_t t) {
      thread_local std::size_t ran = 0;
      const std::size_t now = ++ran;
      std::size_t seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      slot[t] = static_cast<int>(t) + 1;
    });
    for (std::size_t t = 0; t < tasks; ++t) REQUIRE(slot[t] == static_cast<int>(t) + 1);
    pool_sizes.push_back(ropesim::numeric::pool_workers());
  }
  const std::size_t workers = pool_sizes.front();
  CHECK(workers >= 2);
  CHECK(pool_sizes.back() == workers);  // no worker added by the later calls
  CHECK(most.load() * workers >= calls * tasks);
}

TEST_CASE("parallel_for called from a task runs inline on that task's thread",
          "[numeric][parallel]") {
  const std::size_t outer = 6, inner = 50;
  std::vector<std::vector<std::uint64_t>> value(outer, std::vector<std::uint64_t>(inner, 0));
  std::vector<int> same_thread(outer, 0);
  std::vector<std::vector<std::size_t>> order(outer);
  parallel_for(3, outer, [&](std::size_t o) {
    const auto me = std::this_thread::get_id();
    bool same = true;
    parallel_for(
        4, inner,
        [&](std::size_t i) {
          same = same && std::this_thread::get_id() == me;
          value[o][i] = o * 1000 + i;
        },
        [&](std::size_t, std::size_t i) { order[o].push_back(i); });
    same_thread[o] = same ? 1 : 0;
  });
  for (std::size_t o = 0; o < outer; ++o) {
    INFO(o);
    CHECK(same_thread[o] == 1);
    REQUIRE(order[o].size() == inner);
    for (std::size_t i = 0; i < inner; ++i) {
      CHECK(value[o][i] == o * 1000 + i);
      CHECK(order[o][i] == i);  // inline: in index order
    }
  }
}

TEST_CASE("parallel_for: a failing call stops early and leaves the pool usable",
          "[numeric][parallel]") {
  // Task 5 throws at once, the others take 5 ms: the two workers have claimed at most one more
  // task each by the time the failure is seen, so far fewer than the 100 tasks run.
  std::atomic<int> ran{0};
  try {
    parallel_for(2, 100, [&](std::size_t t) {
      ran.fetch_add(1);
      if (t == 5) throw std::invalid_argument("task 5");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    });
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(std::string(e.what()) == "task 5");
  }
  CHECK(ran.load() >= 6);
  CHECK(ran.load() < 20);
  // the next call on the same workers runs every task
  std::vector<int> runs(64, 0);
  parallel_for(2, runs.size(), [&](std::size_t t) { ++runs[t]; });
  for (std::size_t t = 0; t < runs.size(); ++t) CHECK(runs[t] == 1);
}

TEST_CASE("parallel_for: no task sees another task's MPFR exponent range or rounding mode",
          "[numeric][parallel]") {
  // Every task finds MPFR's default exponent range, clear MPFR flags and the caller's
  // rounding mode (upward here), then changes all three and does not restore them.
  mpfr_exp_t emin = 0, emax = 0;  // MPFR's defaults, as a new thread sees them
  std::thread([&] {
    emin = mpfr_get_emin();
    emax = mpfr_get_emax();
  }).join();
  REQUIRE(emin < -100);
  const mpfr_exp_t caller_emin = mpfr_get_emin();
  std::fesetround(FE_UPWARD);
  const std::size_t tasks = 64;
  std::vector<int> clean(tasks, 0);
  for (unsigned threads : {2u, 3u}) {
    parallel_for(threads, tasks, [&](std::size_t t) {
      clean[t] = mpfr_get_emin() == emin && mpfr_get_emax() == emax && !mpfr_overflow_p() &&
                 std::fegetround() == FE_UPWARD;
      mpfr_set_emin(-100);
      mpfr_set_emax(100);
      mpfr_set_overflow();
      std::fesetround(FE_TOWARDZERO);
    });
    for (std::size_t t = 0; t < tasks; ++t) {
      INFO(threads << " threads, task " << t);
      CHECK(clean[t] == 1);
    }
  }
  std::fesetround(FE_TONEAREST);
  CHECK(mpfr_get_emin() == caller_emin);  // the calling thread's own range is untouched
}

TEST_CASE("parallel_for from several threads at once", "[numeric][parallel]") {
  const std::size_t callers = 3, calls = 40, tasks = 16;
  std::vector<std::uint64_t> sums(callers, 0);
  std::vector<std::thread> threads;
  for (std::size_t c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      for (std::size_t k = 0; k < calls; ++k) {
        std::vector<std::uint64_t> slot(tasks, 0);
        parallel_for(2, tasks, [&](std::size_t t) { slot[t] = (c + 1) * (t + 1); });
        for (auto v : slot) sums[c] += v;
      }
    });
  }
  for (auto& t : threads) t.join();
  for (std::size_t c = 0; c < callers; ++c)
    CHECK(sums[c] == calls * (c + 1) * (tasks * (tasks + 1) / 2));
}
