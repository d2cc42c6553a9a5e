// Included by ropesim_verify.cpp inside its anonymous namespace (needs Format, FValue, f_mul,
// f_add, round_to_F, same_value from there).
//
// F's arithmetic on binary64, for the horizon certificate's per-query path (check_candidates).
// Elements of F are held as doubles (exact: F lies inside binary64). A correctly rounded
// operation of F is computed as follows when the format allows it (fast(): nearest-even,
// p ≤ 26, emin − p + 1 ≥ −500, emax ≤ 500), and otherwise through the MPFR operations f_mul and
// f_add of this checker, which are the reference.
//
// WHY IT IS EXACT.
// - A product a·b of elements of F has at most 2p ≤ 52 significant bits and magnitude in
//   [2^(2(emin−p+1)), 2^(2emax+2)) ⊂ binary64's normal range: the binary64 product is exact.
// - A sum a + b: s = fl64(a + b) and the remainder e = (a + b) − s, exact by Knuth's TwoSum
//   (no overflow: |a + b| < 2^502), so a + b = s + e exactly with |e| ≤ ulp64(s)/2.
// - round_nearest(s, e) = round_F(s + e). Let G be F's grid in s's binade (spacing q =
//   2^(max(E, emin) − p + 1), E = floor(log2 |s|)); s and every point and midpoint of G are
//   binary64 numbers (p + 1 ≤ 53 bits). If s is on G, s + e is within ulp64(s)/2 < q/4 of it,
//   so it rounds to s. If s is strictly between a point and a midpoint of G, it is at least one
//   binary64 spacing (ulp64(s), s not being a power of two, since powers of two ≥ 2^(emin−p+1)
//   are on G) from the midpoint, and |e| is below that, so s + e rounds like s. If s is a
//   midpoint, e decides: away from zero when e has s's sign, toward zero when it has the other
//   sign, and to the even neighbour when e = 0. Below 2^emin the exact sum of two elements of
//   F is a multiple of 2^(emin−p+1) with fewer than p bits: exact in F and in binary64 (e = 0).
//   Rounding s to G is done on its bit pattern in F's normal range (the float-to-bf16 trick:
//   add half the dropped unit minus one plus the kept last bit, then clear the dropped bits; a
//   carry moves into the exponent as it should) and by scaling with powers of two below it. A
//   rounded magnitude ≥ 2^(emax+1) is infinite (IEEE nearest-even overflow).
// The self-test (`ropesim-verify --self-test-arithmetic N`, tests/cli/test_verify.cpp) compares
// every operation with f_mul and f_add on N random pairs per format, midpoints included.

class FastF {
 public:
  /// allow_avx2 = false keeps dot4 on the portable chains (the self-test checks both).
  explicit FastF(const Format& F, bool allow_avx2 = true) : F_(F) {
    fast_ =
        F.rnd == MPFR_RNDN && F.p >= 2 && F.p <= 26 && F.emin - F.p + 1 >= -500 && F.emax <= 500;
    const int drop = 53 - static_cast<int>(F.p);
    drop_ = static_cast<unsigned>(drop);
    unit_ = std::uint64_t{1} << drop;
    half_ = unit_ >> 1;
    low_biased_ = static_cast<std::uint64_t>(F.emin + 1023);
    span_ = static_cast<std::uint64_t>(F.emax - F.emin);
    overflow_ = std::ldexp(1.0, static_cast<int>(F.emax) + 1);
    overflow_bits_ = std::bit_cast<std::uint64_t>(overflow_);
#if defined(__x86_64__)
    avx2_ = allow_avx2 && __builtin_cpu_supports("avx2") != 0;
#endif
  }
  bool fast() const { return fast_; }
  /// Whether round_double is exact: nearest-even, 2 ≤ p ≤ 52 (one binary64 bit below F's last
  /// at least), F's smallest subnormal 2^(emin−p+1) ≥ 2^−1000, emax ≥ 1. Wider than fast():
  /// rounding one double needs no exact product or sum.
  bool rounds_doubles() const {
    return F_.rnd == MPFR_RNDN && F_.p >= 2 && F_.p <= 52 && F_.emin - F_.p + 1 >= -1000 &&
           F_.emax >= 1 && F_.emax <= 1023;
  }
  /// round_F(x) for a finite or infinite double x (rounds_doubles() formats): round_nearest
  /// with remainder 0, the argument of the header with e = 0.
  double round_double(double x) const {
    return round_nearest(x, [] { return 0.0; });
  }

  /// round_F(a·b) for elements a, b of F (as doubles). Infinities and NaN behave in binary64
  /// as in F (IEEE), and no binary64 operation here overflows.
  double mul(double a, double b) const {
    if (fast_) return round_nearest(a * b, [] { return 0.0; });  // exact product
    return slow(a, b, false, false);
  }
  /// round_F(a + b) (subtract: round_F(a − b)).
  double add(double a, double b, bool subtract = false) const {
    if (fast_) {
      const double bb = subtract ? -b : b;
      const double s = a + bb;
      return round_nearest(s, [&] {  // TwoSum: a + bb = s + e exactly (asked at midpoints)
        const double v = s - a;
        return (a - (s - v)) + (bb - v);
      });
    }
    return slow(a, b, true, subtract);
  }
  /// The sequential dot product Σ rnd(q_c·k_c), each partial sum rounded (THEORY §2.1).
  double dot(const double* q, const double* k, std::size_t n) const {
    double acc = mul(q[0], k[0]);
    for (std::size_t c = 1; c < n; ++c) acc = add(acc, mul(q[c], k[c]));
    return acc;
  }

  /// Four dot products of q with k[0..3], interleaved (independent chains, the same
  /// operations as dot). With fast(): every rounding without branches (round_in_range; the
  /// TwoSum remainder is always computed), and where any value leaves F's normal range and
  /// zero (subnormal, overflow, infinity, NaN) the four products again through dot, whose
  /// values are the reference (the self-test compares both on random vectors). An exact ±0
  /// (a zero coordinate, a partial sum cancelling exactly: frequent in bf16) stays on the
  /// chains: its bit pattern has no bit below F's last, so it rounds to itself with its sign,
  /// as round_nearest's scaled path returns it, and the binary64 sum that produced it has
  /// IEEE's sign of an exact zero sum, as F's has.
  void dot4(const double* q, const double* const k[4], std::size_t n, double out[4]) const {
#if defined(__x86_64__)
    if (fast_ && avx2_) {
      if (!dot4_avx2(q, k, n, out))
        for (int t = 0; t < 4; ++t) out[t] = dot(q, k[t], n);
      return;
    }
#endif
    if (fast_) {
      double acc[4];
      bool leaves = false;
      for (int t = 0; t < 4; ++t) acc[t] = round_in_range(q[0] * k[t][0], 0.0, leaves);
      for (std::size_t c = 1; c < n; ++c)
        for (int t = 0; t < 4; ++t) {
          const double p = round_in_range(q[c] * k[t][c], 0.0, leaves);  // exact product
          const double s = acc[t] + p, v = s - acc[t];
          acc[t] = round_in_range(s, (acc[t] - (s - v)) + (p - v), leaves);  // TwoSum
        }
      if (!leaves) {
        for (int t = 0; t < 4; ++t) out[t] = acc[t];
        return;
      }
    }
    for (int t = 0; t < 4; ++t) out[t] = dot(q, k[t], n);
  }

 private:
  /// round_F(s + e), e the exact remainder of the binary64 operation giving s (|e| ≤
  /// ulp64(s)/2), computed by rest() only when s is a midpoint of F's grid.
  template <class Rest>
  double round_nearest(double s, const Rest& rest) const {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(s);
    const std::uint64_t biased = (bits >> 52) & 0x7ff;
    // F's normal range emin ≤ E ≤ emax (unsigned: also rejects 0, subnormals, inf, NaN)
    if (biased - low_biased_ > span_) return round_scaled(s, rest);
    const std::uint64_t low = bits & (unit_ - 1);
    std::uint64_t out = bits - low;  // toward zero
    if (low > half_ || (low == half_ && tie_away(s, rest(), (bits & unit_) != 0)))
      out += unit_;  // away from zero (a carry moves into the exponent)
    if ((out & ~(std::uint64_t{1} << 63)) >= overflow_bits_) return s > 0 ? HUGE_VAL : -HUGE_VAL;
    return std::bit_cast<double>(out);
  }
#if defined(__x86_64__)
  /// The constants of dot4_avx2's rounding, one AVX2 register each.
  struct Lanes {
    __m256i low_mask, half, one, exp_mask, low_biased, span, no_sign, overflow_less_one;
    __m128i drop;
  };
  /// round_in_range on four lanes (0/1 integers; masks only from the comparisons); ORs the
  /// lanes that leave F's normal range into `leaves`.
  __attribute__((target("avx2"), always_inline)) static inline __m256d round4(const Lanes& L,
                                                                              __m256d s, __m256d e,
                                                                              __m256i& leaves) {
    const __m256i bits = _mm256_castpd_si256(s), ebits = _mm256_castpd_si256(e);
    const __m256i biased = _mm256_and_si256(_mm256_srli_epi64(bits, 52), L.exp_mask);
    const __m256i low = _mm256_and_si256(bits, L.low_mask);
    const __m256i odd = _mm256_and_si256(_mm256_srl_epi64(bits, L.drop), L.one);
    const __m256i e_zero =  // all ones where e = ±0
        _mm256_cmpeq_epi64(_mm256_slli_epi64(ebits, 1), _mm256_setzero_si256());
    const __m256i same_sign =
        _mm256_xor_si256(_mm256_srli_epi64(_mm256_xor_si256(bits, ebits), 63), L.one);
    const __m256i away =
        _mm256_or_si256(_mm256_and_si256(e_zero, odd), _mm256_andnot_si256(e_zero, same_sign));
    const __m256i above = _mm256_srli_epi64(_mm256_sub_epi64(L.half, low), 63);
    const __m256i tie = _mm256_and_si256(_mm256_cmpeq_epi64(low, L.half), L.one);
    const __m256i up = _mm256_or_si256(above, _mm256_and_si256(tie, away));
    const __m256i out = _mm256_add_epi64(_mm256_sub_epi64(bits, low), _mm256_sll_epi64(up, L.drop));
    // biased − low_biased outside [0, span] (signed: both are below 2^11), or |out| at or
    // above the overflow threshold (both below 2^63)
    // (s = ±0 stays: its bits round to themselves, as round_scaled returns it)
    const __m256i rel = _mm256_sub_epi64(biased, L.low_biased);
    const __m256i s_zero = _mm256_cmpeq_epi64(_mm256_slli_epi64(bits, 1), _mm256_setzero_si256());
    const __m256i outside = _mm256_or_si256(_mm256_cmpgt_epi64(rel, L.span),
                                            _mm256_cmpgt_epi64(_mm256_setzero_si256(), rel));
    leaves = _mm256_or_si256(leaves, _mm256_andnot_si256(s_zero, outside));
    leaves = _mm256_or_si256(
        leaves, _mm256_cmpgt_epi64(_mm256_and_si256(out, L.no_sign), L.overflow_less_one));
    return _mm256_castsi256_pd(out);
  }
  /// dot4's branchless chains with the four lanes in one AVX2 register: round_in_range on
  /// each lane, the same integer steps. False (out unspecified) when a value leaves F's
  /// normal range. Chosen when the CPU has AVX2 (the self-test runs whichever is chosen).
  __attribute__((target("avx2"))) bool dot4_avx2(const double* q, const double* const k[4],
                                                 std::size_t n, double out[4]) const {
    const Lanes L{_mm256_set1_epi64x(static_cast<long long>(unit_ - 1)),
                  _mm256_set1_epi64x(static_cast<long long>(half_)),
                  _mm256_set1_epi64x(1),
                  _mm256_set1_epi64x(0x7ff),
                  _mm256_set1_epi64x(static_cast<long long>(low_biased_)),
                  _mm256_set1_epi64x(static_cast<long long>(span_)),
                  _mm256_set1_epi64x(0x7fffffffffffffffLL),
                  _mm256_set1_epi64x(static_cast<long long>(overflow_bits_ - 1)),
                  _mm_cvtsi32_si128(static_cast<int>(drop_))};
    __m256i leaves = _mm256_setzero_si256();
    const __m256d zero = _mm256_setzero_pd();
    __m256d acc = round4(
        L, _mm256_mul_pd(_mm256_set1_pd(q[0]), _mm256_set_pd(k[3][0], k[2][0], k[1][0], k[0][0])),
        zero, leaves);
    for (std::size_t c = 1; c < n; ++c) {
      const __m256d kc = _mm256_set_pd(k[3][c], k[2][c], k[1][c], k[0][c]);
      const __m256d p = round4(L, _mm256_mul_pd(_mm256_set1_pd(q[c]), kc), zero, leaves);
      const __m256d s = _mm256_add_pd(acc, p), v = _mm256_sub_pd(s, acc);
      const __m256d e =
          _mm256_add_pd(_mm256_sub_pd(acc, _mm256_sub_pd(s, v)), _mm256_sub_pd(p, v));  // TwoSum
      acc = round4(L, s, e, leaves);
    }
    _mm256_storeu_pd(out, acc);
    return _mm256_testz_si256(leaves, leaves) != 0;
  }
#endif
  /// round_nearest(s, e) without branches for s in F's normal range, e the exact remainder
  /// (always given); sets `leaves` (and returns an unspecified value) when s or the result
  /// is outside it.
  double round_in_range(double s, double e, bool& leaves) const {
    // in integer arithmetic on the bit patterns (0/1 values, no data-dependent branch)
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(s);
    const std::uint64_t ebits = std::bit_cast<std::uint64_t>(e);
    const std::uint64_t biased = (bits >> 52) & 0x7ff;
    const std::uint64_t low = bits & (unit_ - 1);
    const std::uint64_t odd = (bits >> drop_) & 1;
    const std::uint64_t e_zero = static_cast<std::uint64_t>((ebits << 1) == 0);  // ±0
    const std::uint64_t same_sign = ((bits ^ ebits) >> 63) ^ 1;
    const std::uint64_t away = (e_zero & odd) | ((e_zero ^ 1) & same_sign);
    const std::uint64_t above = (half_ - low) >> 63;  // low > half_ (both < 2^52)
    const std::uint64_t tie = static_cast<std::uint64_t>(low == half_);
    const std::uint64_t out = bits - low + ((above | (tie & away)) << drop_);
    const std::uint64_t magnitude = out & ~(std::uint64_t{1} << 63);
    const std::uint64_t nonzero = static_cast<std::uint64_t>((bits << 1) != 0);  // ±0 stays
    leaves |=
        static_cast<bool>((static_cast<std::uint64_t>(biased - low_biased_ > span_) & nonzero) |
                          static_cast<std::uint64_t>(magnitude >= overflow_bits_));
    return std::bit_cast<double>(out);
  }
  /// At a midpoint: away from zero when the remainder e points away, else toward zero; e = 0:
  /// to the even neighbour (odd kept bit: away).
  static bool tie_away(double s, double e, bool odd) { return e != 0 ? (e > 0) == (s > 0) : odd; }
  /// The same rounding by scaling: below 2^emin (F's subnormal grid) and above 2^emax.
  template <class Rest>
  double round_scaled(double s, const Rest& rest) const {
    if (s == 0 || !std::isfinite(s)) return s;
    const double mag = std::fabs(s);
    int E2 = 0;
    std::frexp(mag, &E2);  // mag in [2^(E2−1), 2^E2)
    const int ex = std::max(E2 - 1, static_cast<int>(F_.emin));
    const double q = std::ldexp(1.0, ex - static_cast<int>(F_.p) + 1);
    const double r = mag / q;  // exact: a power-of-two scaling inside the normal range
    const double whole = std::floor(r), frac = r - whole;
    const bool up = frac > 0.5 || (frac == 0.5 && tie_away(s, rest(), std::fmod(whole, 2.0) != 0));
    const double out = (up ? whole + 1 : whole) * q;
    if (out >= overflow_) return s > 0 ? HUGE_VAL : -HUGE_VAL;
    return s > 0 ? out : -out;
  }

  double slow(double a, double b, bool sum, bool subtract) const {
    FValue x(F_.p), y(F_.p);
    mpfr_set_d(x, a, MPFR_RNDN);  // exact: elements of F
    mpfr_set_d(y, b, MPFR_RNDN);
    const FValue r = sum ? f_add(x, y, F_, subtract) : f_mul(x, y, F_);
    return mpfr_get_d(r, MPFR_RNDN);  // exact
  }

  Format F_;
  bool fast_ = false;
  std::uint64_t unit_ = 0, half_ = 0, low_biased_ = 0, span_ = 0, overflow_bits_ = 0;
  unsigned drop_ = 0;  // 53 − p: the binary64 bits below F's last bit
  bool avx2_ = false;
  double overflow_ = 0;
};

/// `ropesim-verify --self-test-arithmetic N`: FastF against f_mul and f_add on N random pairs
/// of elements of bf16, fp16, fp32 and p=5,e=5 each (every exponent, subnormals, and pairs
/// whose sum lies at or next to a midpoint of F). Prints one line per format; exit 1 on the
/// first disagreement.
int self_test_arithmetic(long n) {
  std::mt19937_64 rng(20261205);
  const std::vector<std::array<long, 3>> formats = {
      {8, -126, 127}, {11, -14, 15}, {24, -126, 127}, {5, -14, 15}};
  for (const auto& bounds : formats) {
    // plain copies: clang 14 cannot capture structured bindings in the lambdas below
    const long p = bounds[0], emin = bounds[1], emax = bounds[2];
    Format F;
    F.name = "p=" + std::to_string(p);
    F.p = p;
    F.emin = emin;
    F.emax = emax;
    F.rnd = MPFR_RNDN;
    const FastF fast(F), portable(F, false);
    if (!fast.fast()) return 1;
    auto random_element = [&]() {
      std::uniform_int_distribution<long> ex(emin - p + 1, emax);
      std::uniform_int_distribution<long> mant(0, (1L << (p - 1)) - 1);
      const long e = ex(rng);
      double v = 0;
      if (e < emin)  // subnormal: a multiple of 2^(emin−p+1) below 2^emin
        v = std::ldexp(static_cast<double>(mant(rng)), static_cast<int>(emin - p + 1));
      else
        v = std::ldexp(1.0 + std::ldexp(static_cast<double>(mant(rng)), static_cast<int>(1 - p)),
                       static_cast<int>(e));
      return (rng() & 1) ? -v : v;
    };
    auto near = [&](double a) {  // ±(half F's unit at a)·(1 + j·2^(1−p)), j = −1, 0, 1:
      int E2 = 0;                // a + b at or next to a midpoint of F's grid at a
      std::frexp(std::fabs(a), &E2);
      const int ex = std::max(E2 - 1, static_cast<int>(emin));
      const double half_unit = std::ldexp(1.0, ex - static_cast<int>(p));
      const double j = static_cast<double>(static_cast<long>(rng() % 3) - 1);
      const double b = half_unit * (1 + std::ldexp(j, static_cast<int>(1 - p)));
      return (rng() & 1) ? b : -b;
    };
    long checked = 0;
    for (long t = 0; t < n; ++t) {
      const double a = random_element();
      double b = random_element();
      if (t % 3 == 1) b = near(a);
      if (t % 3 == 2)
        b = std::ldexp(a, -static_cast<int>(rng() % (2 * p + 4))) * ((rng() & 1) ? 1 : -1);
      {  // b must be an element of F
        FValue x(F.p), y(64);
        mpfr_set_d(y, b, MPFR_RNDN);
        round_to_F(x, y, F);
        b = mpfr_get_d(x, MPFR_RNDN);
      }
      FValue x(F.p), y(F.p);
      mpfr_set_d(x, a, MPFR_RNDN);
      mpfr_set_d(y, b, MPFR_RNDN);
      const double results[3] = {fast.mul(a, b), fast.add(a, b), fast.add(a, b, true)};
      const FValue refs[3] = {f_mul(x, y, F), f_add(x, y, F), f_add(x, y, F, true)};
      for (int o = 0; o < 3; ++o) {
        FValue got(F.p);
        mpfr_set_d(got, results[o], MPFR_RNDN);
        if (!same_value(got, refs[o]) && !(mpfr_inf_p(got) && mpfr_inf_p(refs[o]) &&
                                           mpfr_signbit(got) == mpfr_signbit(refs[o]))) {
          std::cout << "MISMATCH " << F.name << " op " << o << ": " << text(x) << ", " << text(y)
                    << ": " << text(got) << " against " << text(refs[o]) << "\n";
          return 1;
        }
        ++checked;
      }
    }
    // dot4 (branchless chains, the fallback where a value leaves the normal range) against
    // four dot chains of the operations checked above; lengths 1..16, some vectors mixed
    // with midpoint partners, zeros and values near the overflow threshold
    long dots = 0;
    for (long t = 0; t < n / 50 + 1; ++t) {
      const std::size_t len = 1 + static_cast<std::size_t>(rng() % 16);
      // most vectors inside F's normal range (exponents −4..4, the fast chains); three
      // in 1024 coordinates a zero, a subnormal or any element (the fallback)
      auto moderate = [&]() {
        const double v = std::ldexp(1.0 + std::ldexp(static_cast<double>(rng() % (1UL << (p - 1))),
                                                     static_cast<int>(1 - p)),
                                    static_cast<int>(rng() % 9) - 4);
        return (rng() & 1) ? -v : v;
      };
      std::vector<double> qv(len), kv[4];
      for (auto& x : qv) x = moderate();
      for (auto& kk : kv) {
        kk.resize(len);
        for (std::size_t c = 0; c < len; ++c) {
          const unsigned pick = static_cast<unsigned>(rng() % 1024);
          kk[c] = pick == 0 ? 0.0 : pick == 1 ? random_element() : moderate();
          if (pick == 2) kk[c] = std::ldexp(1.0, static_cast<int>(emin) - 2);
          if (pick >= 3 && pick < 64) kk[c] = 0.0;  // zero products stay on the chains
        }
      }
      // every other vector: a partial sum cancels exactly (q_2 = q_1, k_2 = −k_1 in some
      // lanes: an exact +0 mid-chain, which stays on the chains)
      if (t % 2 == 1 && len >= 3) {
        qv[1] = qv[0];
        for (auto& kk : kv)
          if (rng() & 1) kk[1] = -kk[0];
      }
      const double* ks[4] = {kv[0].data(), kv[1].data(), kv[2].data(), kv[3].data()};
      double got[2][4];
      fast.dot4(qv.data(), ks, len, got[0]);      // AVX2 where the CPU has it
      portable.dot4(qv.data(), ks, len, got[1]);  // the portable chains
      for (int l = 0; l < 4; ++l) {
        const double ref = fast.dot(qv.data(), ks[l], len);
        for (int path = 0; path < 2; ++path)
          if (!(std::bit_cast<std::uint64_t>(got[path][l]) == std::bit_cast<std::uint64_t>(ref) ||
                (std::isnan(got[path][l]) && std::isnan(ref)))) {
            std::cout << "MISMATCH " << F.name << " dot4 (" << (path ? "portable" : "AVX2")
                      << ") lane " << l << " length " << len << "\n";
            return 1;
          }
        ++dots;
      }
    }
    std::cout << F.name << ",emin=" << emin << ",emax=" << emax << ": " << checked
              << " operations agree, " << dots << " dot products\n";
  }
  return 0;
}
