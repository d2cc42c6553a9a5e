#pragma once
/// Errors raised by ropesim for input a user can correct.
///
/// The CLI maps every `ropesim::InvalidArgument` to one line on stderr and exit code 2
/// (STYLE "Errors"). The message names the problem and the accepted values.
#include <stdexcept>
#include <string>

#include "core/text.hpp"

namespace ropesim {

/// Bad user input: unknown format or schedule, malformed spec, impossible parameters.
/// The message is stored as `printable(message)`: whatever input it echoes, a NUL cannot cut
/// it short (what() is a C string) and bytes that are not UTF-8 are written as \xNN.
class InvalidArgument : public std::invalid_argument {
 public:
  explicit InvalidArgument(const std::string& message)
      : std::invalid_argument(printable(message)) {}
};

/// Runs `f()` and returns its result; an InvalidArgument it throws is rethrown with `prefix`
/// and ": " in front of its message, so the one-line error names what to fix: a flag
/// (`--format: unknown format ...`), a spec field (`policy.format: ...`). The error rethrown is a
/// plain InvalidArgument also when `f` threw a subclass (BudgetExceeded, a refusal): code that
/// needs the subclass's type or fields catches it itself, without with_context (the horizon
/// options read an undefined f_large's cause to name --rounding or --format). Other exceptions
/// pass through unchanged.
template <class F>
auto with_context(const std::string& prefix, F&& f) {
  try {
    return f();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(prefix + ": " + e.what());
  }
}

}  // namespace ropesim
