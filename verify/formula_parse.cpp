// The verifier's formula reader (verify/formula_parse.hpp).
#include "formula_parse.hpp"

#include <algorithm>
#include <cctype>
#include <limits>

namespace verify {

std::string canon_not(const std::string& x) {
  if (x == "T") return "F";
  if (x == "F") return "T";
  return "!(" + x + ")";
}
std::string canon_and(const std::string& x, const std::string& y) {
  if (x == "F" || y == "F") return "F";
  if (x == "T") return y;
  if (y == "T") return x;
  return "&(" + std::min(x, y) + "," + std::max(x, y) + ")";
}
std::string canon_or(const std::string& x, const std::string& y) {
  if (x == "T" || y == "T") return "T";
  if (x == "F") return y;
  if (y == "F") return x;
  return "|(" + std::min(x, y) + "," + std::max(x, y) + ")";
}
std::string canon_past(const std::string& x) { return "P(" + x + ")"; }
std::string canon_yesterday(std::uint64_t k, const std::string& x) {
  return "Y^" + std::to_string(k) + "(" + x + ")";
}
std::string canon_mod(std::uint64_t m, std::uint64_t r) {
  if (m == 1) return "T";
  return "mod(" + std::to_string(m) + "," + std::to_string(r) + ")";
}

namespace {

class Reader {
 public:
  Reader(const std::string& s, const std::vector<std::string>& alphabet)
      : s_(s), alphabet_(alphabet) {}
  std::string read() {
    std::string f = disjunction();
    space();
    if (pos_ != s_.size()) fail("an operator ('&', '|', 'S') or the end");
    return f;
  }

 private:
  [[noreturn]] void fail(const std::string& expected) const {
    throw FormulaSyntax("formula: column " + std::to_string(pos_ + 1) + ": expected " + expected);
  }
  void space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  char peek() {
    space();
    return pos_ < s_.size() ? s_[pos_] : '\0';
  }
  void enter() {
    if (++depth_ > 1000) fail("nesting at most 1000 deep");
  }
  std::uint64_t number() {
    space();
    if (pos_ >= s_.size() || !std::isdigit(static_cast<unsigned char>(s_[pos_])))
      fail("a decimal number");
    std::uint64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      const auto d = static_cast<std::uint64_t>(s_[pos_] - '0');
      if (v > (std::numeric_limits<std::uint64_t>::max() - d) / 10) fail("a number below 2^64");
      v = v * 10 + d;
      ++pos_;
    }
    return v;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("'") + c + "'");
    ++pos_;
  }
  std::string disjunction() {
    std::string f = conjunction();
    while (peek() == '|') {
      ++pos_;
      f = canon_or(f, conjunction());
    }
    return f;
  }
  std::string conjunction() {
    std::string f = since();
    while (peek() == '&') {
      ++pos_;
      f = canon_and(f, since());
    }
    return f;
  }
  std::string since() {
    std::string f = unary();
    if (peek() == 'S') throw SinceInFormula("S is not in LTL[P,MOD]");
    return f;
  }
  std::string unary() {
    const char c = peek();
    if (c == '!' || c == 'P' || c == 'Y') {
      enter();
      ++pos_;
      std::string out;
      if (c == '!') {
        out = canon_not(unary());
      } else if (c == 'P') {
        out = canon_past(unary());
      } else {
        std::uint64_t k = 1;
        if (peek() == '^') {
          ++pos_;
          k = number();
          if (k == 0) fail("k >= 1 in Y^k");
        }
        out = canon_yesterday(k, unary());
      }
      --depth_;
      return out;
    }
    return primary();
  }
  std::string primary() {
    const char c = peek();
    if (c == '(') {
      enter();
      ++pos_;
      std::string f = disjunction();
      expect(')');
      --depth_;
      return f;
    }
    if (std::islower(static_cast<unsigned char>(c))) {
      const std::size_t start = pos_;
      while (pos_ < s_.size() &&
             (std::islower(static_cast<unsigned char>(s_[pos_])) ||
              std::isdigit(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_'))
        ++pos_;
      const std::string word = s_.substr(start, pos_ - start);
      if (word == "true") return "T";
      if (word == "false") return "F";
      if (word == "mod") {
        expect('(');
        const std::uint64_t m = number();
        expect(',');
        const std::uint64_t r = number();
        expect(')');
        if (m == 0 || r >= m) fail("mod(m,r) with m >= 1 and r < m");
        return canon_mod(m, r);
      }
      if (std::find(alphabet_.begin(), alphabet_.end(), word) == alphabet_.end()) return "F";
      return word;
    }
    fail("a formula (an atom, 'true', 'false', 'mod(m,r)', '!', 'P', 'Y', 'Y^k' or '(')");
  }

  const std::string& s_;
  const std::vector<std::string>& alphabet_;
  std::size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string canonical_formula(const std::string& text, const std::vector<std::string>& alphabet) {
  return Reader(text, alphabet).read();
}

}  // namespace verify
