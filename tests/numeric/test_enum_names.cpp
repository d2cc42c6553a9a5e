// core/enum_names.hpp: one table per enum gives both directions. The expected refusals are
// the texts the options printed before the tables (ropesim horizon --rounding nearest and
// --summation pairwsie, built from ec58c36, printed exactly these).
#include <catch2/catch.hpp>
#include <string>

#include "core/error.hpp"
#include "numeric/rounding.hpp"
#include "numeric/summation.hpp"

using namespace ropesim;
using numeric::Rounding;
using numeric::Summation;

namespace {

std::string refusal(const auto& parse, const std::string& text) {
  try {
    parse(text);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("names and aliases parse to their values; to_string gives the name", "[enum_names]") {
  CHECK(numeric::parse_rounding("rne") == Rounding::nearest_even);
  CHECK(numeric::parse_rounding("down") == Rounding::downward);
  CHECK(numeric::parse_rounding("toward-zero") == Rounding::toward_zero);
  CHECK(numeric::to_string(Rounding::upward) == "upward");
  CHECK(numeric::to_string(static_cast<Rounding>(99)) == "?");
  CHECK(numeric::parse_summation("wide") == Summation::wide_accumulator);
  CHECK(numeric::to_string(Summation::wide_accumulator) == "wide-accumulator");
}

TEST_CASE("an unknown spelling is refused with the suggestion and the accepted list",
          "[enum_names]") {
  const auto rounding = [](const std::string& t) { return numeric::parse_rounding(t); };
  CHECK(refusal(rounding, "nearest") ==
        "unknown rounding mode 'nearest' (did you mean 'nearest-even' or 'nearest-away'?); "
        "accepted: nearest-even (rne), nearest-away (rna), toward-zero (rz), upward (ru), "
        "downward (rd)");
  const auto summation = [](const std::string& t) { return numeric::parse_summation(t); };
  CHECK(refusal(summation, "pairwsie") ==
        "unknown summation 'pairwsie' (did you mean 'pairwise'?); accepted: sequential, "
        "pairwise, wide-accumulator, exact");
  CHECK(refusal(summation, "Exact") != "(accepted)");  // spellings are exact: no case folding
}
