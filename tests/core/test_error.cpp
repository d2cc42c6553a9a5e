// ropesim::with_context (core/error.hpp): the prefix in front of an InvalidArgument's message,
// as the one-line errors of the CLI and the model-spec reader show it. The expected messages are
// written out by hand.
#include <catch2/catch.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "core/budget.hpp"
#include "core/error.hpp"

using ropesim::BudgetExceeded;
using ropesim::InvalidArgument;
using ropesim::with_context;

namespace {

/// The message of the InvalidArgument that `f` throws, and whether it was a BudgetExceeded.
template <class F>
std::pair<std::string, bool> refusal(F&& f) {
  try {
    f();
  } catch (const BudgetExceeded& e) {
    return {e.what(), true};
  } catch (const InvalidArgument& e) {
    return {e.what(), false};
  }
  return {"(accepted)", false};
}

}  // namespace

TEST_CASE("with_context: the result, or the refusal with the prefix in front", "[error]") {
  CHECK(with_context("--k", [] { return 7; }) == 7);
  const auto [message, budget] = refusal([] {
    return with_context("--format",
                        []() -> int { throw InvalidArgument("unknown format 'fp99'"); });
  });
  CHECK(message == "--format: unknown format 'fp99'");
  CHECK_FALSE(budget);
  // nested, outermost first, as a spec file's name before a field's path
  CHECK(refusal([] {
          return with_context("model.json", [] {
            return with_context("policy.format", []() -> int { throw InvalidArgument("bad"); });
          });
        }).first == "model.json: policy.format: bad");
}

TEST_CASE("with_context: a subclass is rethrown as InvalidArgument; others pass through",
          "[error]") {
  const auto [message, budget] = refusal([] {
    return with_context("--positions", []() -> int { throw BudgetExceeded("too slow"); });
  });
  CHECK(message == "--positions: too slow");
  CHECK_FALSE(budget);  // the rethrown error is a plain InvalidArgument
  try {
    with_context("--format", []() -> int { throw std::runtime_error("internal"); });
    FAIL("with_context swallowed an error");
  } catch (const InvalidArgument&) {
    FAIL("a runtime_error became an InvalidArgument");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "internal");
  }
}
