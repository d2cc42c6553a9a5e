#include "proofs/range/records.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "core/error.hpp"
#include "numeric/engine.hpp"
#include "numeric/format_properties.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::proofs {

using numeric::Mpfr;

namespace {

constexpr std::int64_t kMaxLimit = 4'000'000'000'000'000'000LL;

/// Sign of S(n) − S(m), exact; 0 when equal or undecided at 4096 bits.
int compare_sums(const CosineSum& s, std::int64_t n, std::int64_t m) {
  const auto en = s.exact(n), em = s.exact(m);
  if (en && em) return cmp(*en, *em) < 0 ? -1 : (cmp(*en, *em) > 0 ? 1 : 0);
  for (mpfr_prec_t P = 64; P <= 4096; P *= 2) {
    Mpfr nlo(P), nhi(P), mlo(P), mhi(P);
    s.enclose(n, nlo, nhi);
    s.enclose(m, mlo, mhi);
    if (mpfr_cmp(nhi, mlo) < 0) return -1;
    if (mpfr_cmp(nlo, mhi) > 0) return 1;
  }
  return 0;
}

/// S(0) − S(n) as the nearest double, from a 128-bit enclosure.
double delta_double(const CosineSum& s, std::int64_t n) {
  Mpfr lo(128), hi(128), w(128);
  s.enclose(n, lo, hi);
  const mpq_class W = s.weight_sum();
  mpfr_set_q(w, W.get_mpq_t(), MPFR_RNDN);
  mpfr_add(lo, lo, hi, MPFR_RNDN);
  mpfr_div_2ui(lo, lo, 1, MPFR_RNDN);
  mpfr_sub(w, w, lo, MPFR_RNDN);
  return mpfr_get_d(w, MPFR_RNDN);
}

std::vector<mpz_class> cf_of_rational(mpq_class x, std::int64_t limit) {
  std::vector<mpz_class> out;
  mpz_class q_prev = 0, q = 1;
  for (;;) {
    mpz_class a;
    mpz_fdiv_q(a.get_mpz_t(), x.get_num_mpz_t(), x.get_den_mpz_t());
    out.push_back(a);
    if (out.size() > 1) {
      const mpz_class next = a * q + q_prev;
      q_prev = q;
      q = next;
      if (q > limit) break;
    }
    x -= mpq_class(a);
    if (sgn(x) == 0) break;
    x = 1 / x;
  }
  return out;
}

}  // namespace

std::vector<mpz_class> continued_fraction_of_turn(const BlockAngle& angle, std::int64_t limit) {
  if (angle.turn()) return cf_of_rational(*angle.turn(), limit);
  const bool negative = angle.theta().sign() < 0;
  for (mpfr_prec_t P = 256; P <= (1 << 16); P *= 2) {
    Mpfr lo(P), hi(P), pilo(P), pihi(P), t(P);
    angle.theta().enclose(lo, hi);
    if (negative) {
      mpfr_neg(t, lo, MPFR_RNDN);  // exact
      mpfr_neg(lo, hi, MPFR_RNDN);
      mpfr_set(hi, t, MPFR_RNDN);
    }
    mpfr_const_pi(pilo, MPFR_RNDD);
    mpfr_const_pi(pihi, MPFR_RNDU);
    mpfr_mul_2ui(pilo, pilo, 1, MPFR_RNDD);
    mpfr_mul_2ui(pihi, pihi, 1, MPFR_RNDU);
    mpfr_div(lo, lo, pihi, MPFR_RNDD);  // θ > 0 here (θ = 0 has a turn)
    mpfr_div(hi, hi, pilo, MPFR_RNDU);
    std::vector<mpz_class> out;
    mpz_class q_prev = 0, q = 1;
    bool precise = true;
    for (;;) {
      Mpfr flo(P), fhi(P);
      mpfr_floor(flo, lo);
      mpfr_floor(fhi, hi);
      if (!mpfr_equal_p(flo, fhi)) {
        precise = false;
        break;
      }
      mpz_class a;
      mpfr_get_z(a.get_mpz_t(), flo, MPFR_RNDN);
      out.push_back(a);
      if (out.size() > 1) {
        const mpz_class next = a * q + q_prev;
        q_prev = q;
        q = next;
        if (q > limit) return out;
      }
      mpfr_sub(lo, lo, flo, MPFR_RNDD);
      mpfr_sub(hi, hi, flo, MPFR_RNDU);
      if (mpfr_sgn(lo) <= 0) {
        precise = false;
        break;
      }
      // 1/[lo, hi] = [1/hi, 1/lo]
      mpfr_ui_div(t, 1, lo, MPFR_RNDU);
      mpfr_ui_div(lo, 1, hi, MPFR_RNDD);
      mpfr_set(hi, t, MPFR_RNDU);
    }
    if (precise) return out;
  }
  throw std::runtime_error("continued_fraction_of_turn: precision exhausted");
}

std::vector<RecordDistance> record_distances(const CosineSum& s, std::int64_t limit) {
  if (limit < 1)
    throw InvalidArgument("record_distances: limit must be ≥ 1, got " + std::to_string(limit));
  if (limit > kMaxLimit) limit = kMaxLimit;
  std::vector<RecordDistance> records;
  records.push_back({1, delta_double(s, 1)});
  if (s.blocks.size() == 1) {
    const auto cf = continued_fraction_of_turn(s.blocks[0], limit);
    mpz_class q_prev = 0, q = 1;
    for (std::size_t k = 1; k < cf.size(); ++k) {
      const mpz_class next = cf[k] * q + q_prev;
      q_prev = q;
      q = next;
      if (q > limit) break;
      const std::int64_t n = q.get_si();
      if (n <= records.back().n) continue;
      // Lagrange: a strict new minimum; confirmed exactly (S(n) > S(previous record)).
      if (compare_sums(s, n, records.back().n) <= 0) continue;
      records.push_back({n, delta_double(s, n)});
    }
    return records;
  }
  // Several blocks: scan with the binary64 filter (cosine_scan.hpp), exact decisions where it
  // is unsure. [best − best_radius, best + best_radius] encloses S at the last record.
  const CosineSumFilter filter(s);
  double best = 0, best_radius = 0;
  auto enclose_record = [&](std::int64_t n) {
    // [lo, hi] from a 128-bit enclosure, outward to doubles; best = lo and best_radius ≥ hi − lo
    // (RN(hi − lo) ≥ (hi − lo)(1 − u), times 1 + 2^-50 rounded: ≥ (hi − lo)).
    Mpfr lo(128), hi(128);
    s.enclose(n, lo, hi);
    best = mpfr_get_d(lo, MPFR_RNDD);
    best_radius = (mpfr_get_d(hi, MPFR_RNDU) - best) * (1 + 0x1p-50);
  };
  enclose_record(1);
  constexpr auto kRun = static_cast<std::int64_t>(CosineSumFilter::kRun);
  double value[CosineSumFilter::kRun], bound[CosineSumFilter::kRun];
  for (std::int64_t n0 = 2; n0 <= limit; n0 += kRun) {
    const std::int64_t count = std::min(kRun, limit - n0 + 1);
    const bool filtered = filter.evaluate(n0, static_cast<std::size_t>(count), value, bound);
    for (std::int64_t k = 0; k < count; ++k) {
      const std::int64_t n = n0 + k;
      const int sign = filtered ? proven_sign(value[k], bound[k], best, best_radius) : 0;
      if (sign < 0) continue;
      if (sign > 0 || compare_sums(s, n, records.back().n) > 0) {
        records.push_back({n, delta_double(s, n)});
        enclose_record(n);
      }
    }
  }
  return records;
}

SearchBound delta_bound(const CosineSum& s, const mpq_class& C, const mpq_class& f_large,
                        std::int64_t limit, const CosineScanOptions& scan) {
  if (sgn(C) <= 0) throw InvalidArgument("delta_bound: C must be positive");
  if (scan.stats) *scan.stats = {};
  if (limit < 1) return {0, true};
  const mpq_class threshold = s.weight_sum() - f_large / C;  // fail iff S(n) > threshold
  if (s.blocks.size() > 1) {
    // The first n with S(n) > threshold is a record (it exceeds every earlier S(m) ≤ threshold)
    // and the first record that does, so the scan for it gives the same L.
    const auto n = first_reaching(s, threshold, false, std::min(limit, kMaxLimit), scan);
    return n ? SearchBound{*n - 1, false} : SearchBound{limit, true};
  }
  for (const auto& rec : record_distances(s, limit)) {
    if (s.compare(rec.n, threshold) > 0) return {rec.n - 1, false};
  }
  return {limit, true};
}

std::optional<RoundsToOne> rounds_to_one(const numeric::Format& f, numeric::Rounding r) {
  const auto& engine = numeric::default_engine();
  const numeric::Value one = engine.from_rational(f, mpq_class(1), numeric::Rounding::nearest_even);
  if (!one.is_finite() || exact_rational(one) != 1) return std::nullopt;
  const mpq_class prev = exact_rational(numeric::next_down(f, one));
  mpq_class t;
  switch (r) {
    case numeric::Rounding::nearest_even:
    case numeric::Rounding::nearest_away:
      t = (prev + 1) / 2;
      break;
    case numeric::Rounding::upward:
      t = prev;
      break;
    case numeric::Rounding::downward:
    case numeric::Rounding::toward_zero:
      t = 1;
      break;
  }
  t.canonicalize();
  const numeric::Value rounded = engine.from_rational(f, t, r);
  const bool inclusive = rounded.is_finite() && exact_rational(rounded) == 1;
  return RoundsToOne{t, inclusive};
}

std::optional<SearchBound> tie_distance(const CosineSum& s, const numeric::Format& f,
                                        numeric::Rounding r, std::int64_t limit,
                                        const CosineScanOptions& scan) {
  if (scan.stats) *scan.stats = {};
  const auto rt = rounds_to_one(f, r);
  if (!rt) return std::nullopt;
  if (limit < 1) return SearchBound{0, true};
  const mpq_class W = s.weight_sum();
  const mpq_class threshold = rt->threshold * W;  // round(S/W) = 1 iff S ≥ t·W (W > 0)
  if (s.blocks.size() > 1) {
    // As in delta_bound: the first n reaching the threshold is the first record reaching it.
    const auto n = first_reaching(s, threshold, rt->inclusive, std::min(limit, kMaxLimit), scan);
    return n ? SearchBound{*n, false} : SearchBound{limit, true};
  }
  for (const auto& rec : record_distances(s, limit)) {
    const int c = s.compare(rec.n, threshold);
    if (c > 0 || (c == 0 && rt->inclusive)) return SearchBound{rec.n, false};
  }
  return SearchBound{limit, true};
}

}  // namespace ropesim::proofs
