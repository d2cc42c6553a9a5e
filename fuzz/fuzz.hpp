#pragma once
/// Shared harness of the libFuzzer targets (docs/TESTING.md "Fuzzing and sanitizers").
///
/// Every target feeds the input, as text, to one parser. The only accepted failure is the
/// parsers' documented rejection, ropesim::InvalidArgument; any other exception, a failed
/// round-trip check, a crash, undefined behaviour, a hang or a huge allocation is a finding
/// (ASan/UBSan and libFuzzer's -timeout / -rss_limit_mb / -malloc_limit_mb report the last
/// three). A finding aborts, so libFuzzer saves the input as crash-<sha1>.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace ropesim::fuzz {

/// Reports a finding on stderr and aborts (libFuzzer saves the input).
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "\nropesim fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

/// A round-trip or invariant check: a finding unless `ok`.
inline void require(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

/// Runs `parse_and_check(text)` on the input; InvalidArgument is the expected rejection.
template <class F>
int run(const std::uint8_t* data, std::size_t size, F&& parse_and_check) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    parse_and_check(text);
  } catch (const ropesim::InvalidArgument&) {
    // documented rejection of bad input
  } catch (const std::exception& e) {
    finding(std::string("unexpected exception (not ropesim::InvalidArgument): ") + e.what());
  } catch (...) {
    finding("unexpected non-std exception");
  }
  return 0;
}

/// The round trip of an enum spelling: parse, print the canonical spelling, parse it again.
template <class Parse, class Print>
void enum_round_trip(std::string_view text, Parse parse, Print print) {
  const auto value = parse(text);
  const std::string canonical(print(value));
  require(parse(canonical) == value, "'" + canonical + "' does not parse back to its value");
}

}  // namespace ropesim::fuzz
