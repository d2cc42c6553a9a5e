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
  explicit FastF(const Format& F) : F_(F) {
    fast_ =
        F.rnd == MPFR_RNDN && F.p >= 2 && F.p <= 26 && F.emin - F.p + 1 >= -500 && F.emax <= 500;
    const int drop = 53 - static_cast<int>(F.p);
    unit_ = std::uint64_t{1} << drop;
    half_ = unit_ >> 1;
    low_biased_ = static_cast<std::uint64_t>(F.emin + 1023);
    span_ = static_cast<std::uint64_t>(F.emax - F.emin);
    overflow_ = std::ldexp(1.0, static_cast<int>(F.emax) + 1);
    overflow_bits_ = std::bit_cast<std::uint64_t>(overflow_);
  }
  bool fast() const { return fast_; }

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
  /// operations as dot).
  void dot4(const double* q, const double* const k[4], std::size_t n, double out[4]) const {
    double acc[4];
    for (int t = 0; t < 4; ++t) acc[t] = mul(q[0], k[t][0]);
    for (std::size_t c = 1; c < n; ++c)
      for (int t = 0; t < 4; ++t) acc[t] = add(acc[t], mul(q[c], k[t][c]));
    for (int t = 0; t < 4; ++t) out[t] = acc[t];
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
  for (const auto& [p, emin, emax] : formats) {
    Format F;
    F.name = "p=" + std::to_string(p);
    F.p = p;
    F.emin = emin;
    F.emax = emax;
    F.rnd = MPFR_RNDN;
    const FastF fast(F);
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
    std::cout << F.name << ",emin=" << emin << ",emax=" << emax << ": " << checked
              << " operations agree\n";
  }
  return 0;
}
