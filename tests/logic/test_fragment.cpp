// logic/fragment: the narrowest syntactic fragment, temporal depth and depth.
#include <catch2/catch.hpp>

#include "logic/formula.hpp"
#include "logic/fragment.hpp"

using namespace ropesim::ltl;

namespace {
Fragment of(std::string_view text) { return fragment(parse(text)); }
}  // namespace

TEST_CASE("fragment: the operators used decide", "[logic][fragment]") {
  CHECK(of("a") == Fragment::ltl_p);
  CHECK(of("true & !a") == Fragment::ltl_p);
  CHECK(of("P(a & !P true)") == Fragment::ltl_p);
  CHECK(of("mod(2,0) & P a") == Fragment::ltl_p_mod);
  CHECK(of("mod(3,1)") == Fragment::ltl_p_mod);
  CHECK(of("Y^2 a") == Fragment::ltl_p_y);
  CHECK(of("P(b & Y a)") == Fragment::ltl_p_y);
  CHECK(of("Y a & mod(2,1)") == Fragment::ltl_p_y_mod);
  CHECK(of("a S b") == Fragment::ltl_s);
  CHECK(of("P(a S Y b)") == Fragment::ltl_s);
  CHECK(of("a S mod(2,0)") == Fragment::ltl_s_mod);
  CHECK(of("(a S b) | P mod(2,0) | Y c") == Fragment::ltl_s_mod);
  // Syntactic, not semantic: `true S a` says the same as `P a`.
  CHECK(of("true S a") == Fragment::ltl_s);
  // Only what the root reaches counts.
  Formula f;
  NodeId a = f.symbol("a");
  f.since(a, a);
  f.set_root(f.past(a));
  CHECK(fragment(f) == Fragment::ltl_p);
}

TEST_CASE("fragment names and inclusions", "[logic][fragment]") {
  CHECK(to_string(Fragment::ltl_p) == "LTL[P]");
  CHECK(to_string(Fragment::ltl_p_mod) == "LTL[P,MOD]");
  CHECK(to_string(Fragment::ltl_p_y) == "LTL[P,Y]");
  CHECK(to_string(Fragment::ltl_p_y_mod) == "LTL[P,Y,MOD]");
  CHECK(to_string(Fragment::ltl_s) == "LTL");
  CHECK(to_string(Fragment::ltl_s_mod) == "LTL[S,MOD]");
  CHECK(within(Fragment::ltl_p, Fragment::ltl_p_mod));
  CHECK(within(Fragment::ltl_p, Fragment::ltl_s));
  CHECK(within(Fragment::ltl_p_y, Fragment::ltl_s));
  CHECK(within(Fragment::ltl_p_mod, Fragment::ltl_s_mod));
  CHECK_FALSE(within(Fragment::ltl_p_mod, Fragment::ltl_s));
  CHECK_FALSE(within(Fragment::ltl_p_y, Fragment::ltl_p_mod));
  CHECK_FALSE(within(Fragment::ltl_s, Fragment::ltl_p_y_mod));
}

TEST_CASE("temporal depth and depth", "[logic][fragment]") {
  CHECK(temporal_depth(parse("a & b")) == 0);
  CHECK(depth(parse("a & b")) == 1);
  CHECK(depth(parse("a")) == 0);
  CHECK(depth(parse("mod(2,1)")) == 0);
  CHECK(depth(parse("!(a & b)")) == 2);
  CHECK(temporal_depth(parse("P a")) == 1);
  CHECK(temporal_depth(parse("P(a & Y^3 P b)")) == 3);
  CHECK(depth(parse("P(a & Y^3 P b)")) == 4);
  CHECK(temporal_depth(parse("(a S P b) S c")) == 3);
  CHECK(temporal_depth(parse("Y^5 a")) == 1);
  CHECK(temporal_depth(parse("P a | Y Y Y b")) == 3);
  CHECK(temporal_depth(parse("mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)")) == 1);
}
