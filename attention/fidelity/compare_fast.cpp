#include "attention/fidelity/compare_fast.hpp"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>

#include "numeric/trig/eft.hpp"

namespace ropesim::attention::detail {

namespace {

using numeric::trig::fast_two_sum;
using numeric::trig::two_prod_error;
using numeric::trig::two_sum;

/// Magnitudes handled: far inside binary64's normal range, so that no step below underflows
/// or overflows (an entry outside goes to MPFR).
bool in_range(double v) {
  const double a = std::fabs(v);
  return a >= 0x1p-900 && a <= 0x1p900;
}

bool is_power_of_two(double v) {
  return (std::bit_cast<std::uint64_t>(v) & ((std::uint64_t{1} << 52) - 1)) == 0;
}

/// |x − ref| as a normalised double-double dh + dl (dh ≥ 0), with `error` bounding its
/// distance from MPFR's RN256(|x − ref|) for every ref in the enclosure; `exact` when it is
/// that value exactly (a double reference).
struct Difference {
  double dh = 0, dl = 0, error = 0;
  bool exact = false;
};

std::optional<Difference> difference(double x, const EnclosedReference& ref) {
  const double rh = ref.r.hi, rl = ref.r.lo;
  if (!std::isfinite(x) || !std::isfinite(rh) || !std::isfinite(rl) || !std::isfinite(ref.error) ||
      ref.error < 0)
    return std::nullopt;
  Difference d;
  const auto [s, e] = two_sum(x, -rh);  // s + e = x − rh exactly
  if (rl == 0 && ref.error == 0) {
    d.dh = s;
    d.dl = e;
    d.exact = true;
  } else {
    const double t = e - rl;  // one rounding: ≤ 2^-53·|t|
    const auto [h, l] = two_sum(s, t);
    d.dh = h;
    d.dl = l;
    d.error = ref.error + std::fabs(t) * 0x1p-52;
  }
  if (d.dh < 0) {
    d.dh = -d.dh;
    d.dl = -d.dl;
  }
  if (d.dh == 0) return d.exact ? std::optional<Difference>(d) : std::nullopt;
  if (!in_range(d.dh)) return std::nullopt;
  if (d.exact) {
    // RN256 keeps dh + dl exactly when dl is 0 or within 200 bits of dh (≤ 254 bits in all)
    if (d.dl != 0 && std::fabs(d.dl) < d.dh * 0x1p-200) return std::nullopt;
  } else {
    d.error += d.dh * 0x1p-250;  // RN256 of the difference
  }
  return d;
}

/// RN53 of a positive real v within `err` of h + l (|l| ≤ ulp(h)/2): h when the whole
/// interval, widened by `margin` parts of the half-spacing for an intermediate rounding of v,
/// rounds to h; else nullopt. An intermediate RN64 moves v by ≤ 2^-64·v, at most a 2^-10 part
/// of the half-spacing on either side of h (margin 2^-9); RN256 is inside `err`.
std::optional<double> nearest_decided(double h, double l, double err, double margin) {
  if (!(h > 0) || !in_range(h)) return std::nullopt;
  double half = (std::nextafter(h, HUGE_VAL) - h) / 2;  // exact
  if (l < 0 && is_power_of_two(h)) half /= 2;           // the double below h is h − ulp(h)/2
  if (std::fabs(l) + err < half * (1 - margin)) return h;
  return std::nullopt;
}

}  // namespace

std::optional<FastErrors> fast_errors(double x, const EnclosedReference& ref) {
  const auto d = difference(x, ref);
  if (!d) return std::nullopt;
  FastErrors out;
  if (d->dh == 0) return out;  // x = ref exactly: 0, 0, equal
  out.differs = true;
  // absolute: RU53 of D = dh + dl is u = dh (dl ≤ 0) or the double above dh (dl > 0); decided
  // when every D' within d->error lies in (below, u], below the double under u.
  const double u = d->dl > 0 ? std::nextafter(d->dh, HUGE_VAL) : d->dh;
  if (d->error > 0) {
    const double below = std::nextafter(u, 0.0);
    const double dist_low = (d->dh - below) + d->dl;  // D − below (dh − below: 0 or an ulp)
    const double dist_up = (u - d->dh) - d->dl;       // u − D
    if (!(dist_low > 2 * d->error) || !(dist_up >= 2 * d->error)) return std::nullopt;
  }
  out.absolute = u;
  // relative: RN53(RN64(D / R)), R = |ref|
  double rh = ref.r.hi, rl = ref.r.lo;
  if (rh < 0) {
    rh = -rh;
    rl = -rl;
  }
  if (rh == 0) {
    if (rl != 0 || ref.error != 0) return std::nullopt;
    out.relative = std::numeric_limits<double>::infinity();  // only the reference is 0
    return out;
  }
  if (!in_range(rh) || !(ref.error < rh * 0x1p-20)) return std::nullopt;
  const double q1 = d->dh / rh;
  if (!in_range(q1)) return std::nullopt;
  // dh − q1·rh exactly (Dekker's TwoProd; dh − p is exact by Sterbenz, and the remainder of a
  // correctly rounded quotient is a double)
  const double p = q1 * rh;
  const double rem = (d->dh - p) - two_prod_error(q1, rh, p);
  // D/R = q1 + (rem + dl − q1·rl)/(rh + rl): the numerator in three roundings, the division
  // by rh (relative error ≤ |rl/rh| ≤ 2^-52) in one
  const double num = rem + d->dl - q1 * rl;
  const double t = num / rh;
  const double computed = (std::fabs(rem) + std::fabs(d->dl) + std::fabs(q1 * rl)) / rh * 0x1p-51 +
                          std::fabs(t) * 0x1p-50;
  // the enclosures: |ΔD| ≤ error, |ΔR| ≤ ref.error < R·2^-20, so |Δ(D/R)| ≤ 2(error +
  // 2·q1·ref.error)/rh
  const double inputs = 2 * (d->error + 2 * q1 * ref.error) / rh;
  const auto [qh, ql] = two_sum(q1, t);
  const auto q = nearest_decided(qh, ql, computed + inputs + qh * 0x1p-250, 0x1p-9);
  if (!q) return std::nullopt;
  out.relative = *q;
  return out;
}

FastUlpFormat::FastUlpFormat(const numeric::Format& t)
    : round_(t, numeric::Rounding::nearest_even),
      precision_(t.precision),
      emin_(t.emin),
      usable_(!t.is_fixed_point() && round_.fast_rounding()) {}

std::optional<std::optional<double>> FastUlpFormat::ulps(double x,
                                                         const EnclosedReference& ref) const {
  // round_T(ref): exact for a double reference; for an enclosure, decided when the whole of it
  // lies strictly inside the rounding interval of round_T(r.hi)
  const double rounded = round_.round(ref.r.hi);
  if (ref.error != 0 || ref.r.lo != 0) {
    if (!std::isfinite(rounded) || rounded == 0 || !std::isfinite(ref.r.lo)) return std::nullopt;
    const int er = std::ilogb(rounded);
    const double quantum = std::ldexp(1.0, std::max(er, emin_) - (precision_ - 1));
    const double diff = (ref.r.hi - rounded) + ref.r.lo;  // r − rounded, ≤ 2^-53 relative
    const bool toward_zero = (diff < 0) == (rounded > 0);
    double half = quantum / 2;
    if (toward_zero && is_power_of_two(std::fabs(rounded)) && er > emin_) half /= 2;
    if (!(std::fabs(diff) * (1 + 0x1p-50) + ref.error < half * (1 - 0x1p-20))) return std::nullopt;
  }
  if (!std::isfinite(rounded)) return std::optional<double>();  // no ulps (MPFR: not finite)
  const int e = (rounded == 0 ? emin_ : std::max(std::ilogb(rounded), emin_)) - (precision_ - 1);
  const auto d = difference(x, ref);
  if (!d) return std::nullopt;
  if (d->dh == 0) return std::optional<double>(0.0);
  // RN53(RN256(D)·2^-e) = RN53(D)·2^-e while the result is a normal double
  const auto n = d->exact && d->dl == 0 ? std::optional<double>(d->dh)
                                        : nearest_decided(d->dh, d->dl, d->error, 0x1p-40);
  if (!n) return std::nullopt;
  const double v = std::ldexp(*n, -e);
  if (!(v >= DBL_MIN) || !std::isfinite(v)) return std::nullopt;
  return std::optional<double>(v);
}

EnclosedReference scaled(const EnclosedReference& ref, double s) {
  const double p = ref.r.hi * s;
  if (p == 0 || !in_range(p)) {
    EnclosedReference out{{p, ref.r.lo * s}, std::fabs(s) * ref.error};
    out.error += std::fabs(out.r.lo) + 0x1p-900;  // not used by the fast path: kept wide
    return out;
  }
  const double lo = two_prod_error(ref.r.hi, s, p) + ref.r.lo * s;  // two roundings
  const auto [h, l] = fast_two_sum(p, lo);
  return {{h, l}, std::fabs(s) * ref.error + std::fabs(lo) * 0x1p-51 + std::fabs(h) * 0x1p-200};
}

}  // namespace ropesim::attention::detail
