// The studies moved out of cli/ (issue 36): proofs/range/horizon_rows.hpp and
// proofs/literature/bounds_study.hpp validate once, in the library, and their results do not depend
// on the threads. Expected values: fp16, g = 1, k = 1, C = 2096 certifies N_max = 43
// (docs/tables/horizon.md, also asserted through the CLI in tests/cli/test_hardening.cpp); the
// refusals are the one-line messages the CLI prints (by hand from the options).
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "proofs/literature/bounds_study.hpp"
#include "proofs/range/horizon_rows.hpp"

using namespace ropesim;

TEST_CASE("horizon_rows: the table's rows in order, the same on 1 and 2 threads", "[studies]") {
  proofs::HorizonGrid grid;
  grid.formats = {"fp16"};
  grid.gs = {"1"};
  grid.ks = {"1", "2"};
  grid.Cs = {"2096"};
  grid.realisations = {"r1"};
  const auto specs = proofs::horizon_grid_specs(grid);
  REQUIRE(specs.size() == 2);
  const auto one = proofs::horizon_rows(specs, 1);
  const auto two = proofs::horizon_rows(specs, 2);
  REQUIRE(one.size() == 2);
  CHECK(one[0].k == 1);
  CHECK(one[1].k == 2);
  CHECK(one[0].range.n_max == 43);
  for (std::size_t i = 0; i < one.size(); ++i) {
    CHECK(one[i].range.n_max == two[i].range.n_max);
    CHECK(proofs::to_json(one[i]) == proofs::to_json(two[i]));
  }
}

TEST_CASE("horizon_grid_specs: a bad cell names the list flag, an empty grid is refused",
          "[studies]") {
  proofs::HorizonGrid grid;
  grid.formats = {"fp16", "bf17"};
  grid.gs = {"1"};
  grid.ks = {"1"};
  grid.Cs = {"auto"};
  grid.realisations = {"r1"};
  REQUIRE_THROWS_AS(proofs::horizon_grid_specs(grid), InvalidArgument);
  try {
    proofs::horizon_grid_specs(grid);
  } catch (const InvalidArgument& e) {
    CHECK(std::string(e.what()).rfind("--formats: ", 0) == 0);
  }
  grid.formats = {"fp16"};
  grid.ks.clear();
  REQUIRE_THROWS_WITH(proofs::horizon_grid_specs(grid),
                      Catch::Matchers::StartsWith("table horizon: the grid is empty"));
}

TEST_CASE("base_context_study: its options are checked once, in the library", "[studies]") {
  proofs::BaseContextOptions o;
  o.dim = 31;
  o.lengths = {1024};
  REQUIRE_THROWS_WITH(proofs::base_context_study(o),
                      "--dim: the head dimension must be even (got 31)");
  o.dim = 32;
  o.lengths = {2048, 1024};
  REQUIRE_THROWS_WITH(proofs::base_context_study(o),
                      "--lengths: give the context lengths in increasing order, each once");
  o.lengths = {};
  REQUIRE_THROWS_WITH(proofs::base_context_study(o), "--lengths: no context length given");
  o.lengths = {proofs::kMaxContextLength + 1};
  REQUIRE_THROWS_AS(proofs::base_context_study(o), InvalidArgument);
}
