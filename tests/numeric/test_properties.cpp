// RapidCheck properties of correct rounding (run inside Catch2 with rc::prop; the seed is
// fixed by tests/main.cpp). Generators draw formats (p in 2..30, exponent ranges, subnormals
// on/off, saturation, fixed point; wide formats with p up to 120) and rationals aimed at the
// interesting places: random ratios, elements of F with tiny perturbations, exact midpoints,
// the overflow and underflow thresholds.
#include <rapidcheck.h>
#include <rapidcheck/catch.h>

#include <catch2/catch.hpp>
#include <string>

#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "tests/numeric/reference_rounding.hpp"
#include "tests/numeric/test_support.hpp"

namespace {

using namespace numeric_test;
using reference::Number;
using ropesim::numeric::parse_format;

// ------------------------------------------------------------------------------ generators

/// A format spelling (so that failures print a readable, re-parsable spec).
std::string draw_format_spec(bool wide = false) {
  if (wide) {
    const int p = *rc::gen::inRange(54, 121);
    const int emin = *rc::gen::inRange(-20000, -999);
    const int emax = *rc::gen::inRange(1000, 20001);
    std::string spec = "p=" + std::to_string(p) + ",emin=" + std::to_string(emin) +
                       ",emax=" + std::to_string(emax);
    if (*rc::gen::inRange(0, 3) == 0) spec += ",subnormals=off";
    return spec;
  }
  const int kind = *rc::gen::inRange(0, 8);
  if (kind == 0) {
    const int integer_bits = *rc::gen::inRange(0, 21);
    const int fraction_bits = *rc::gen::inRange(integer_bits == 0 ? 1 : 0, 31);
    return "fixed:" + std::to_string(integer_bits) + "." + std::to_string(fraction_bits);
  }
  const int p = *rc::gen::inRange(2, 31);
  std::string spec;
  if (kind == 1) {
    spec = "p=" + std::to_string(p) + ",e=" + std::to_string(*rc::gen::inRange(2, 12));
  } else {
    const int emin = *rc::gen::inRange(-300, 6);
    const int emax = *rc::gen::inRange(emin, std::min(emin + 400, 700) + 1);
    spec = "p=" + std::to_string(p) + ",emin=" + std::to_string(emin) +
           ",emax=" + std::to_string(emax);
  }
  if (*rc::gen::inRange(0, 3) == 0) spec += ",subnormals=off";
  if (*rc::gen::inRange(0, 4) == 0) spec += ",overflow=saturate";
  return spec;
}

/// a/b as a canonical rational (mpq_class(a, b) does not canonicalize, and GMP's arithmetic
/// and comparisons require canonical operands).
mpq_class frac(long a, long b) {
  mpq_class q(a, b);
  q.canonicalize();
  return q;
}

mpz_class draw_mpz(int max_limbs) {
  const int limbs = *rc::gen::inRange(1, max_limbs + 1);
  mpz_class z = 0;
  for (int i = 0; i < limbs; ++i) {
    z <<= 64;
    z += mpz_class(std::to_string(*rc::gen::arbitrary<std::uint64_t>()));
  }
  return z;
}

mpq_class times_pow2(mpq_class q, long k) {
  if (k >= 0) {
    mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(k));
  } else {
    mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<mp_bitcnt_t>(-k));
  }
  return q;
}

/// Smallest quantum of f and the exponent range of its elements' quanta.
long smallest_quantum(const Format& f) {
  return f.is_fixed_point() ? -f.fraction_bits : f.emin - f.precision + 1;
}
long largest_quantum(const Format& f) {
  return f.is_fixed_point() ? -f.fraction_bits : f.emax - f.precision + 1;
}
int digits(const Format& f) {
  return f.is_fixed_point() ? f.integer_bits + f.fraction_bits : f.precision;
}

/// A non-negative integer significand and quantum exponent of an element of f: m·2^q.
std::pair<mpz_class, long> draw_element_parts(const Format& f) {
  const int p = digits(f);
  mpz_class m = draw_mpz((p + 63) / 64);
  m %= mpz_class(1) << p;
  long q = smallest_quantum(f);
  if (!f.is_fixed_point()) {
    const long span = largest_quantum(f) - q;
    q += *rc::gen::inRange<long>(0, span + 1);
    if (q > smallest_quantum(f)) m |= mpz_class(1) << (p - 1);  // normal: top bit set
    if (!f.subnormals && q == smallest_quantum(f)) m |= mpz_class(1) << (p - 1);
  }
  return {m, q};
}

/// A rational aimed at f's rounding boundaries, or anywhere.
mpq_class draw_rational(const Format& f) {
  const int p = digits(f);
  mpq_class x;
  switch (*rc::gen::inRange(0, 7)) {
    case 0: {  // random ratio at a random scale around f's range
      mpz_class den = draw_mpz(2);
      if (den == 0) den = 1;
      x = mpq_class(draw_mpz(2), den);
      x.canonicalize();
      x = times_pow2(
          x, *rc::gen::inRange<long>(smallest_quantum(f) - 10, largest_quantum(f) + p + 10));
      break;
    }
    case 1: {  // an element, maybe perturbed by a tiny amount
      const auto [m, q] = draw_element_parts(f);
      x = times_pow2(mpq_class(m), q);
      const int d = *rc::gen::inRange(0, 80);
      if (d > 0) x += (*rc::gen::arbitrary<bool>() ? 1 : -1) * times_pow2(mpq_class(1), q - d);
      break;
    }
    case 2: {  // an exact midpoint of two neighbours (or of the quantum grid)
      const auto [m, q] = draw_element_parts(f);
      x = times_pow2(mpq_class(mpz_class(2 * m + 1)), q - 1);
      break;
    }
    case 3: {  // near the overflow threshold: max + k·(top quantum)/4
      x = reference::max_finite(f) +
          frac(*rc::gen::inRange(-8, 12), 4) * times_pow2(mpq_class(1), largest_quantum(f));
      break;
    }
    case 4: {  // near the underflow threshold: k·(min positive)/8
      x = frac(*rc::gen::inRange(0, 24), 8) * reference::min_positive(f);
      break;
    }
    case 5: {  // small integers
      x = *rc::gen::inRange(-1000, 1001);
      break;
    }
    default: {  // a simple fraction
      x = frac(*rc::gen::inRange(1, 1000), *rc::gen::inRange(1, 1000));
      break;
    }
  }
  if (*rc::gen::arbitrary<bool>()) x = -x;
  return x;
}

/// A (signed) element of f drawn from rationals by the reference (never ±inf/NaN).
Number draw_element(const Format& f) {
  const mpq_class x = draw_rational(f);
  return reference::round(f, x, Rounding::toward_zero);
}

Rounding draw_mode() { return all_modes[*rc::gen::inRange(0, 5)]; }

const Engine& draw_engine() {
  const auto list = engines();
  return *list[static_cast<std::size_t>(*rc::gen::inRange<int>(0, static_cast<int>(list.size())))];
}

/// Real-number order on non-NaN numbers (±0 equal; ±inf at the ends).
int order(const Number& a, const Number& b) {
  auto key = [](const Number& n) { return n.is_inf() ? (n.negative ? -1 : 1) : 0; };
  if (key(a) != key(b)) return key(a) < key(b) ? -1 : 1;
  if (a.is_inf()) return 0;
  return cmp(a.value(), b.value()) < 0 ? -1 : (a.value() == b.value() ? 0 : 1);
}

int order(const Number& a, const mpq_class& q) { return order(a, Number::of(q)); }

/// Agreement, except that the sign of a fixed-point zero is an open convention.
bool agrees_up_to_fixed_zero_sign(const Format& f, const Value& got, const Number& expected) {
  if (f.is_fixed_point() && expected.is_zero()) return to_number(got).is_zero();
  return agrees(got, expected);
}

}  // namespace

TEST_CASE("properties of from_rational on random formats", "[numeric][properties]") {
  rc::prop("agrees with the independent reference in every mode", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const mpq_class x = draw_rational(f);
    const Rounding r = draw_mode();
    const Engine& e = draw_engine();
    RC_LOG() << spec << " x=" << x.get_str() << " " << mode_name(r) << " " << e.name();
    const Value got = e.from_rational(f, x, r);
    const Number expected = reference::round(f, x, r);
    RC_LOG() << "engine " << show(got) << " reference " << expected.to_string();
    RC_ASSERT(agrees_up_to_fixed_zero_sign(f, got, expected));
  });

  rc::prop("the result is the exact value or a neighbour of it", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const mpq_class x = draw_rational(f);
    const Rounding r = draw_mode();
    const Engine& e = draw_engine();
    RC_LOG() << spec << " x=" << x.get_str() << " " << mode_name(r);
    const Value got = e.from_rational(f, x, r);
    const Number g = to_number(got);
    RC_ASSERT(!g.is_nan());
    const mpq_class max = reference::max_finite(f);
    if (abs(x) > max) {
      // beyond the largest finite value: ±max or ±inf with the sign of x
      RC_ASSERT(g.negative == (sgn(x) < 0));
      RC_ASSERT((g.is_inf() || g.magnitude == max));
      return;
    }
    RC_ASSERT(g.is_finite());
    if (g.value() == x) return;
    const Number up = to_number(ropesim::numeric::next_up(f, got));
    const Number down = to_number(ropesim::numeric::next_down(f, got));
    RC_LOG() << "r=" << g.to_string() << " next_down=" << down.to_string()
             << " next_up=" << up.to_string();
    RC_ASSERT(order(down, x) < 0);
    RC_ASSERT(order(up, x) > 0);
    // and round-to-nearest is within half a spacing: |r - x| ≤ |neighbour - x| on x's side
    if (ropesim::numeric::is_nearest(r)) {
      const Number& other = g.value() < x ? up : down;
      if (other.is_finite()) RC_ASSERT(abs(g.value() - x) <= abs(other.value() - x));
    }
  });

  rc::prop("ties to even under nearest_even, away from zero under nearest_away", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const Engine& e = draw_engine();
    // neighbours a = m·2^q and b = (m+1)·2^q (b may be 2^p·2^q = the next binade's start)
    auto [m, q] = draw_element_parts(f);
    const mpq_class a = times_pow2(mpq_class(m), q);
    const mpq_class b = times_pow2(mpq_class(mpz_class(m + 1)), q);
    RC_PRE(b <= reference::max_finite(f));
    RC_PRE(m > 0 || f.is_fixed_point() || f.subnormals);  // 0 and 2^emin: see the report
    const mpq_class mid = (a + b) / 2;
    const bool negative = *rc::gen::arbitrary<bool>();
    const mpq_class x = negative ? mpq_class(-mid) : mid;
    RC_LOG() << spec << " x=" << x.get_str();
    // the even one of m, m+1 (m + 1 = 2^p starts the next binade with significand 2^(p-1):
    // even as well)
    const mpq_class even = mpz_even_p(m.get_mpz_t()) ? a : b;
    const Number rne = to_number(e.from_rational(f, x, Rounding::nearest_even));
    const Number rna = to_number(e.from_rational(f, x, Rounding::nearest_away));
    RC_ASSERT(rne.is_finite());
    RC_ASSERT(rne.magnitude == even);
    RC_ASSERT(rna.magnitude == b);
    if (!(f.is_fixed_point() && rne.is_zero())) RC_ASSERT(rne.negative == negative);
    RC_ASSERT(rna.negative == negative);
  });

  rc::prop("monotone: x ≤ y implies round(x) ≤ round(y)", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const Rounding r = draw_mode();
    const Engine& e = draw_engine();
    const mpq_class x = draw_rational(f);
    mpq_class y;
    if (*rc::gen::arbitrary<bool>()) {
      y = draw_rational(f);
    } else {
      // a close y: x plus a small multiple of the smallest quantum's fractions
      y = x + frac(*rc::gen::inRange(0, 64), 16) *
                  times_pow2(mpq_class(1), smallest_quantum(f) + *rc::gen::inRange(0, 40));
    }
    const mpq_class lo = x <= y ? x : y, hi = x <= y ? y : x;
    RC_LOG() << spec << " " << mode_name(r) << " lo=" << lo.get_str() << " hi=" << hi.get_str();
    const Number rl = to_number(e.from_rational(f, lo, r));
    const Number rh = to_number(e.from_rational(f, hi, r));
    RC_ASSERT(!rl.is_nan());
    RC_ASSERT(!rh.is_nan());
    RC_ASSERT(order(rl, rh) <= 0);
  });

  rc::prop("downward ≤ x ≤ upward, equal or adjacent; the other modes pick one of them", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const Engine& e = draw_engine();
    const mpq_class x = draw_rational(f);
    RC_PRE(abs(x) <= reference::max_finite(f));
    RC_LOG() << spec << " x=" << x.get_str();
    const Value dv = e.from_rational(f, x, Rounding::downward);
    const Value uv = e.from_rational(f, x, Rounding::upward);
    const Number d = to_number(dv), u = to_number(uv);
    RC_ASSERT(d.is_finite());
    RC_ASSERT(u.is_finite());
    RC_ASSERT(d.value() <= x);
    RC_ASSERT(x <= u.value());
    if (d.value() == u.value()) {
      RC_ASSERT(d.value() == x);
    } else {
      RC_ASSERT(order(to_number(ropesim::numeric::next_up(f, dv)), u) == 0);
      RC_ASSERT(order(to_number(ropesim::numeric::next_down(f, uv)), d) == 0);
    }
    const Number z = to_number(e.from_rational(f, x, Rounding::toward_zero));
    RC_ASSERT(order(z, sgn(x) >= 0 ? d : u) == 0);
    for (Rounding r : {Rounding::nearest_even, Rounding::nearest_away}) {
      const Number n = to_number(e.from_rational(f, x, r));
      RC_ASSERT((order(n, d) == 0 || order(n, u) == 0));
    }
  });
}

TEST_CASE("properties of the arithmetic on random formats", "[numeric][properties]") {
  rc::prop("+ - * / fma sqrt agree with the independent reference", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const Rounding r = draw_mode();
    const Engine& e = draw_engine();
    const Number a = draw_element(f), b = draw_element(f), c = draw_element(f);
    const Value av = to_value(f, a), bv = to_value(f, b), cv = to_value(f, c);
    RC_LOG() << spec << " " << mode_name(r) << " a=" << a.to_string() << " b=" << b.to_string()
             << " c=" << c.to_string();
    const int op = *rc::gen::inRange(0, 6);
    Value got;
    Number expected;
    switch (op) {
      case 0:
        got = e.add(f, av, bv, r), expected = reference::add(f, a, b, r);
        break;
      case 1:
        got = e.sub(f, av, bv, r), expected = reference::sub(f, a, b, r);
        break;
      case 2:
        got = e.mul(f, av, bv, r), expected = reference::mul(f, a, b, r);
        break;
      case 3:
        RC_PRE(!b.is_zero());  // x/0 in a format without infinity: an open convention
        got = e.div(f, av, bv, r), expected = reference::div(f, a, b, r);
        break;
      case 4:
        got = e.fma(f, av, bv, cv, r), expected = reference::fma(f, a, b, c, r);
        break;
      default:
        got = e.sqrt(f, av, r), expected = reference::sqrt(f, a, r);
        break;
    }
    RC_LOG() << "op " << op << ": engine " << show(got) << " reference " << expected.to_string();
    RC_ASSERT(agrees_up_to_fixed_zero_sign(f, got, expected));
  });

  rc::prop("next_up/next_down step to the adjacent element; ulp is that step", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    const Number a = draw_element(f);
    const Value av = to_value(f, a);
    RC_PRE(a.magnitude < reference::max_finite(f));
    RC_LOG() << spec << " a=" << a.to_string();
    const Number up = to_number(ropesim::numeric::next_up(f, av));
    RC_ASSERT(up.is_finite());
    RC_ASSERT(up.value() > a.value());
    // nothing of F strictly between: the midpoint rounds down to a and up to `up`
    const mpq_class mid = (a.value() + up.value()) / 2;
    RC_ASSERT(reference::round(f, mid, Rounding::downward).value() == a.value());
    RC_ASSERT(reference::round(f, mid, Rounding::upward).value() == up.value());
    const Number back = to_number(ropesim::numeric::next_down(f, ropesim::numeric::next_up(f, av)));
    RC_ASSERT(back.value() == a.value());
    // Goldberg's ulp of |a| is the spacing above |a| (|a| < max)
    if (!a.is_zero()) {
      Number mag = a;
      mag.negative = false;
      const Number above = to_number(ropesim::numeric::next_up(f, to_value(f, mag)));
      const long k = ropesim::numeric::ulp_exponent(f, av);
      RC_ASSERT(above.value() - mag.value() == times_pow2(mpq_class(1), k));
    }
  });

  rc::prop("parse_format reads the fields it is given and its name reads back", [] {
    const std::string spec = draw_format_spec();
    const Format f = parse_format(spec);
    RC_LOG() << spec << " -> name " << f.name;
    RC_ASSERT(parse_format(f.name) == f);
    if (spec.rfind("fixed:", 0) == 0) {
      RC_ASSERT(f.is_fixed_point());
      const auto dot = spec.find('.');
      RC_ASSERT(f.integer_bits == std::stoi(spec.substr(6, dot - 6)));
      RC_ASSERT(f.fraction_bits == std::stoi(spec.substr(dot + 1)));
      return;
    }
    RC_ASSERT(f.subnormals == (spec.find("subnormals=off") == std::string::npos));
    RC_ASSERT(f.has_infinity == (spec.find("overflow=saturate") == std::string::npos));
    RC_ASSERT(f.precision == std::stoi(spec.substr(2)));
    const auto e_pos = spec.find(",e=");
    if (e_pos != std::string::npos) {
      const int w = std::stoi(spec.substr(e_pos + 3));
      RC_ASSERT(f.emax == (1 << (w - 1)) - 1);  // IEEE: emax = 2^(w-1) - 1, emin = 1 - emax
      RC_ASSERT(f.emin == 1 - f.emax);
    } else {
      RC_ASSERT(f.emin == std::stoi(spec.substr(spec.find("emin=") + 5)));
      RC_ASSERT(f.emax == std::stoi(spec.substr(spec.find("emax=") + 5)));
    }
  });
}

TEST_CASE("properties on wide formats (p 54..120, exponents to ±20000)",
          "[numeric][properties][wide]") {
  rc::prop("from_rational agrees with the reference", [] {
    const std::string spec = draw_format_spec(true);
    const Format f = parse_format(spec);
    const mpq_class x = draw_rational(f);
    const Rounding r = draw_mode();
    const Engine& e = draw_engine();
    RC_LOG() << spec << " x=" << x.get_str() << " " << mode_name(r);
    const Value got = e.from_rational(f, x, r);
    const Number expected = reference::round(f, x, r);
    RC_LOG() << "engine " << show(got) << " reference " << expected.to_string();
    RC_ASSERT(agrees(got, expected));
  });
  rc::prop("+ - * / fma sqrt agree with the reference", [] {
    const std::string spec = draw_format_spec(true);
    const Format f = parse_format(spec);
    const Rounding r = draw_mode();
    const Engine& e = draw_engine();
    const Number a = draw_element(f), b = draw_element(f), c = draw_element(f);
    const Value av = to_value(f, a), bv = to_value(f, b), cv = to_value(f, c);
    RC_LOG() << spec << " " << mode_name(r) << " a=" << a.to_string() << " b=" << b.to_string()
             << " c=" << c.to_string();
    RC_ASSERT(agrees(e.add(f, av, bv, r), reference::add(f, a, b, r)));
    RC_ASSERT(agrees(e.sub(f, av, bv, r), reference::sub(f, a, b, r)));
    RC_ASSERT(agrees(e.mul(f, av, bv, r), reference::mul(f, a, b, r)));
    RC_ASSERT(agrees(e.div(f, av, bv, r), reference::div(f, a, b, r)));
    RC_ASSERT(agrees(e.fma(f, av, bv, cv, r), reference::fma(f, a, b, c, r)));
    RC_ASSERT(agrees(e.sqrt(f, av, r), reference::sqrt(f, a, r)));
  });
}
