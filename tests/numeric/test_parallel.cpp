// numeric::parallel_for: every task once, progress on the calling thread, and the error of the
// lowest-numbered failing task whatever the thread count.
#include <atomic>
#include <catch2/catch.hpp>
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
