#include "core/suggest.hpp"

#include <algorithm>
#include <cctype>

namespace ropesim {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool contains_ignoring_case(std::string_view haystack, std::string_view needle) {
  if (needle.size() > haystack.size()) return false;
  for (std::size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    bool same = true;
    for (std::size_t j = 0; same && j < needle.size(); ++j)
      same = lower(haystack[i + j]) == lower(needle[j]);
    if (same) return true;
  }
  return false;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  // d[i][j]: distance between a[0..i) and b[0..j), three rows (transpositions look two back)
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::size_t> two(m + 1), one(m + 1), row(m + 1);
  for (std::size_t j = 0; j <= m; ++j) one[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      row[j] = std::min({one[j] + 1, row[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1])) {
        row[j] = std::min(row[j], two[j - 2] + 1);
      }
    }
    two.swap(one);
    one.swap(row);
  }
  return one[m];
}

std::vector<std::string> nearest_names(std::string_view given,
                                       const std::vector<std::string>& names) {
  std::vector<std::string> out;
  if (given.empty()) return out;
  for (const auto& n : names) {
    if (n == given) return {};
  }
  const std::size_t limit = std::max<std::size_t>(1, std::min<std::size_t>(3, given.size() / 3));
  std::size_t best = limit + 1;
  for (const auto& n : names) {
    const std::size_t d = edit_distance(given, n);
    if (d < best) {
      best = d;
      out.clear();
    }
    if (d == best && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  }
  if (out.empty() && given.size() >= 3) {
    for (const auto& n : names) {
      if (contains_ignoring_case(n, given) && std::find(out.begin(), out.end(), n) == out.end())
        out.push_back(n);
    }
  }
  if (out.size() > 3) out.resize(3);
  return out;
}

std::string did_you_mean(std::string_view given, const std::vector<std::string>& names) {
  const auto near = nearest_names(given, names);
  if (near.empty()) return "";
  std::string text = " (did you mean ";
  for (std::size_t k = 0; k < near.size(); ++k) {
    if (k > 0) text += k + 1 == near.size() ? " or " : ", ";
    text += "'" + near[k] + "'";
  }
  return text + "?)";
}

std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& names) {
  return did_you_mean(given, std::vector<std::string>(names.begin(), names.end()));
}

}  // namespace ropesim
