// numeric::parse_decimal_exact, the exact reader of every number in schedule specs and model
// specs (exact.hpp). Checks: an integer result printed in digits parses back to itself, and a
// plain integer input gives what GMP's own reader gives.
#include <gmpxx.h>

#include <cctype>

#include "fuzz/fuzz.hpp"
#include "numeric/exact.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    const mpq_class q = ropesim::numeric::parse_decimal_exact(text);
    if (q.get_den() == 1) {
      const std::string digits = q.get_num().get_str();
      ropesim::fuzz::require(ropesim::numeric::parse_decimal_exact(digits) == q,
                             "integer '" + digits + "' does not parse back");
    }
    bool plain_integer = !text.empty();
    for (std::size_t i = 0; i < text.size(); ++i) {
      const bool sign = i == 0 && (text[i] == '-' || text[i] == '+');
      if (!sign && !std::isdigit(static_cast<unsigned char>(text[i]))) plain_integer = false;
    }
    if (plain_integer && text.size() > (text[0] == '+' || text[0] == '-' ? 1u : 0u)) {
      const std::string body(text[0] == '+' ? text.substr(1) : text);
      ropesim::fuzz::require(mpq_class(mpz_class(body, 10)) == q,
                             "integer '" + body + "' parsed to " + q.get_str());
    }
  });
}
