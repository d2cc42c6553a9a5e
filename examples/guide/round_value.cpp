// Round the real number 0.1 into fp16 and bf16 under two rounding directions (numeric/).
// The decimal 0.1 is parsed exactly into the rational 1/10 and rounded once into F: no double
// is involved on the way.
#include <iostream>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"

int main() {
  using namespace ropesim::numeric;
  try {
    const mpq_class x = parse_decimal_exact("0.1");  // exactly 1/10
    for (const Format& f : {Format::fp16(), Format::bf16()}) {
      for (const Rounding r : {Rounding::nearest_even, Rounding::toward_zero}) {
        const Value v = mpfr_engine().from_rational(f, x, r);
        std::cout << "0.1 in " << f.name << " (" << to_string(r) << ") = " << v.to_decimal()
                  << " = " << v.to_hex() << "\n";
      }
    }
    // A bad spelling throws ropesim::InvalidArgument; its message lists the accepted ones.
    std::cout << parse_format("fp12").name << "\n";
  } catch (const ropesim::InvalidArgument& e) {
    std::cout << "error: " << e.what() << "\n";
  }
}
