#pragma once
/// Internal: splitting spec strings (schedule and realisation specs).
#include <string>
#include <string_view>
#include <vector>

namespace ropesim::attention::detail {

/// The pieces of `text` between occurrences of `separator`, in order, empty pieces kept:
/// split("a,,b", ',') = {"a", "", "b"}, split("", ',') = {""}. Throws nothing but
/// std::bad_alloc.
inline std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto k = text.find(separator, start);
    out.emplace_back(text.substr(start, k == std::string_view::npos ? text.npos : k - start));
    if (k == std::string_view::npos) break;
    start = k + 1;
  }
  return out;
}

}  // namespace ropesim::attention::detail
