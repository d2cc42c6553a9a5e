// Which engine a run uses (numeric/engine.hpp default_engine; numeric/fast_engine.hpp
// engine_by_name). Kept apart from both engines so that neither names the other's choice:
// fast_engine delegates to mpfr_engine, and nothing points back.
#include <string>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "numeric/engine.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::numeric {

// The fast engine is bit-identical to the MPFR engine by construction and by test
// (tests/numeric/test_fast_engine.cpp), and much faster on p ≤ 25 formats.
const Engine& default_engine() { return fast_engine(); }

std::string_view engine_names() { return "mpfr, fast, auto"; }

const Engine& engine_by_name(std::string_view name) {
  if (name == "mpfr") return mpfr_engine();
  if (name == "fast" || name == "auto") return fast_engine();
  throw InvalidArgument("unknown engine '" + std::string(name) + "'" +
                        did_you_mean(name, std::vector<std::string>{"mpfr", "fast", "auto"}) +
                        "; accepted: " + std::string(engine_names()));
}

}  // namespace ropesim::numeric
