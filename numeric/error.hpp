#pragma once
/// Errors raised by ropesim for input a user can correct.
///
/// The CLI maps every `ropesim::InvalidArgument` to one line on stderr and exit code 2
/// (STYLE "Errors"). The message names the problem and the accepted values.
#include <stdexcept>
#include <string>

#include "numeric/text.hpp"

namespace ropesim {

/// Bad user input: unknown format or schedule, malformed spec, impossible parameters.
/// The message is stored as `printable(message)`: whatever input it echoes, a NUL cannot cut
/// it short (what() is a C string) and bytes that are not UTF-8 are written as \xNN.
class InvalidArgument : public std::invalid_argument {
 public:
  explicit InvalidArgument(const std::string& message)
      : std::invalid_argument(printable(message)) {}
};

}  // namespace ropesim
