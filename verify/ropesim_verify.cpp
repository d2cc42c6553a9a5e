// ropesim-verify FILE.json: re-checks a certificate written by `ropesim rotations`, `horizon`
// or `compile --certificate` (proofs/reports/certificate.hpp) and prints VALID
// (exit 0), or INVALID and the first item that does not hold (exit 1). Exit 2: the file cannot
// be read, is not a certificate, or makes a claim this checker does not cover (it says which);
// such a certificate is never reported VALID.
//
// WHAT IS TRUSTED. MPFR (correctly rounded +, −, ×, exp, log, cos, sin, π in every direction),
// GMP (exact rationals), nlohmann-json (reading the file), the C++ standard library, and this
// file. Nothing of ropesim is linked: the certificate is data, and every number the verdict
// depends on is recomputed here from the definitions (THEORY §1, §2.1, §3, §6).
//
// THE NUMBER MODEL. F is the binary floating-point format the certificate names by its
// parameters: precision p (with the hidden bit), IEEE exponents emin..emax, subnormals,
// infinities. The named formats fp16, bf16, tf32, fp32, fp64 and fp8e5m2 must carry their
// standard parameters. Rounding x into F (round_to_F) is done by hand in MPFR's default (huge)
// exponent range, so no value is ever outside MPFR's range: with e = floor(log2|x|), x is
// rounded to p bits when e ≥ emin and to p − (emin − e) bits below (the subnormal grid
// 2^(emin−p+1)); when that count is ≤ 0, |x| is below the smallest subnormal s and the result is
// 0 or s by the rounding mode (nearest-even: s iff |x| > s/2). A rounded magnitude ≥ 2^(emax+1)
// overflows: ±inf under nearest-even, ±max under toward-zero, and by direction under upward and
// downward. This is IEEE 754's rounding with gradual underflow. Covered: nearest-even,
// toward-zero, upward, downward, subnormals on, infinities on. Not covered (exit 2):
// nearest-away, formats without subnormals or infinities (fp8e4m3 saturates), fixed point.
// Operations on elements of F are computed exactly first (a product at 2p + 2 bits, a sum at
// emax − emin + p + 8 bits, enough for the exact sum of two elements of F) and rounded once.
//
// REALS ROUNDED INTO F (Ziv's strategy, NUMERIC §2). A real y that is not known exactly
// (cos of an angle, 2πa/m, 10000^(−1/64), exp(−f)) is enclosed in [lo, hi] at w bits with
// directed roundings: interval arithmetic over the angle's expression, then
// |cos x − cos lo| ≤ |x − lo| ≤ hi − lo (the same for sin). If lo and hi round to the same
// element of F (same value and sign), so does y, because rounding is monotone. Otherwise w is
// doubled, up to 2^16 bits; beyond that the certificate is not checked (exit 2). The loop ends
// whenever y is not a rounding boundary; boundaries are dyadic, and the values that can be
// dyadic are handled exactly first: cos and sin of 2πt for rational t are rational only at
// multiples of 1/12 (Niven's theorem; the table in exact_turn_trig), cos 0 = 1, sin 0 = 0, and
// rational angles and weights are exact rationals.
//
// REALISED ROTATIONS (THEORY §3). Block d of R̂_i: r1 and r3 round cos and sin of the exact
// angle θ_d·i once into F (for a turn θ_d = 2πa/m this is 2π·((a·i) mod m)/m, the same real,
// which is r3's table entry T_d(i mod m)); r2 rounds θ̂ = round_F(θ_d), î = round_F(i),
// φ = round_F(θ̂·î), then cos φ and sin φ (cos of ±inf or NaN is NaN). The angles are rebuilt from
// the schedule's name with this checker's own table (verify/schedule_table.hpp); the
// certificate's listed angles (exact expressions, the grammar of Parser) must be the same, and
// a name outside the table is refused (exit 2). Reading is strict (verify/strict_json.hpp).
//
// CENSUS CERTIFICATE (THEORY §3 Def 2.1, Prop 4.1): verify/census_check.hpp. Every position of
// the window is realised here and split into classes of equal rotations; the distinct count,
// the first repeat, the largest class, the period and every witness are checked against them.
//
// HORIZON CERTIFICATE (THEORY §6, RoPE-X eq. 10 and App D). The head: Q = K = 0; per rotary
// block the query bias (round_F(C·w_d·cos kθ_d), round_F(−C·w_d·sin kθ_d)) and the key bias
// (1, 0); q_i and k_j are the biases rotated by R̂_i, R̂_j with THEORY §2.1's arithmetic
// (rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1))), and Ŝ_{i,j} = q_i·k_j summed
// sequentially in coordinate order (unrotated pairs are zero and add exact zeros, so they are
// left out). Checked: C is a positive finite element of F; f_large is the smallest positive
// f in F with round_F(exp(−f)) = 0 (round_F(exp(−f)) = 0 and, for its predecessor f⁻ > 0 in F,
// round_F(exp(−f⁻)) ≠ 0: exp is monotone); for every query k+1 ≤ i ≤ N_max+1, in order, every
// score Ŝ_{i,j}, 0 ≤ j < i, is recomputed, the target and the largest other score (first j on
// ties) equal the listed ones, and target − largest ≥ f_large exactly. That is the definition
// of N_max ≥ L; with `at_limit` it is all the certificate claims. Otherwise the failing query
// i = N_max + 2: the listed competitor's recomputed score and the target's differ by less than
// f_large (or one is not finite), and the listed gap is their exact difference. Hence
// N_max^(k) = the claimed value exactly. Cost: one score per (query, key), quadratic in N_max.
// With `evidence` "candidates" (the candidate algorithm, r1/r3 only) the per-query list is
// replaced by an argument that scores few competitors: every realised score is within E_v of its
// ideal C·S(i−k−j), S(n) = Σ_d w_d cos(θ_d n) (own_error_bound derives E_v here; the
// certificate's E is not used), so an offset n with C·(S(0) − S⁺(n)) − 2E_v ≥ f_large cannot
// break any query's lead (S⁺ ≥ S from the realised rotations; S is even, so offsets
// −(k−1)..−1 use |n|). At each certified query the target t_i is computed exactly and a
// per-query bound err_i on |Ŝ_{i,j} − C·S(n)|, valid for every key, from the realised query
// alone (check_candidates states the derivation); a candidate offset with
// C·S⁺(n) + err_i ≤ t_i − f_large is excluded there, and so is one with
// C·S⁺(n) + A(n) + R_i ≤ t_i − f_large (the split bound: R_i per query, A(n) per offset;
// check_candidates part 4), and every other competitor (listed candidates included) is scored
// exactly (F's arithmetic on binary64 where verify/fast_f.hpp
// proves it exact, MPFR otherwise) and must trail
// the target by f_large. The failing query is checked as for the scan.
//
// COMPILE CERTIFICATE (THEORY §7 C1, C4, C5). f_large as above. The P head (C1 Patch 2), as
// proofs::certify_past_head defines its claim: Z_c = the sequential sum of c ones in F,
// α_c = round_F(1/Z_c), h(c) = the sequential sum of c copies of α_c (once Z stops changing,
// h(c) = rnd(h(c−1) + α)); the re-binarisation FFN ReLU(rnd(h − f1)), ReLU(rnd(h − f2)),
// rnd(rnd(s·u1) + rnd(−s·u2)) with s = 1/(f2 − f1) exact in F must give exactly 0 at h = 0 and
// exactly 1 at every h(c), c = 1..count; the count recomputed here (the first failure − 1, the
// limit, or every count once Z and h both stop changing, since h is constant from there) must
// equal the listed one. Every MOD_m^r head (C4): b̂ = round_F((1 + cos 2π/m)/2), w = rnd(Ĉ·b̂),
// the query bias (round_F(cos 2πr/m), round_F(−sin 2πr/m)) equal the listed ones; at query
// residue s the query is that bias rotated by T(s) = r3's table of the turn 1/m, then (1, 0);
// the BOS key is (Ĉ, 0) rotated by T(0), then (0, 0); a non-BOS key is (0, 0, w, 0); the two
// sequential scores and the winner's exact lead (BOS iff s = r) equal the listed ones, and the
// lead is ≥ f_large. Every Y^k head: its embedded horizon certificate is for this F, rounding,
// k and f_large, claims `at_limit` (N_max^(k) ≥ n_max: every query up to n_max + 1 listed) and
// is checked as above. The certified length is the smallest of the P head's count and the Y^k
// heads' n_max (none: every length) and must equal the listed one. Not covered: the LayerNorm
// mirror (compile --certificate refuses it). A compile certificate is checked against the model
// file it names (`ropesim-verify CERT.json MODEL.json`; refused without it): its SHA-256, every
// head and FFN of the model bound to the evidence, the formula re-read — verify/compile_check.inc.
#include <fcntl.h>
#include <gmp.h>
#include <gmpxx.h>
#include <mpfr.h>
#include <openssl/evp.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "formula_parse.hpp"

namespace {

using json = nlohmann::json;

/// An item of the certificate that does not hold: exit 1.
struct Invalid : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// The file cannot be read or checked: exit 2.
struct Unreadable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An MPFR number that frees itself.
class Mp {
 public:
  explicit Mp(mpfr_prec_t prec) { mpfr_init2(x_, prec); }
  Mp(const Mp& o) {
    mpfr_init2(x_, mpfr_get_prec(o.x_));
    mpfr_set(x_, o.x_, MPFR_RNDN);
  }
  Mp& operator=(const Mp& o) {
    if (this != &o) {
      mpfr_set_prec(x_, mpfr_get_prec(o.x_));
      mpfr_set(x_, o.x_, MPFR_RNDN);
    }
    return *this;
  }
  ~Mp() { mpfr_clear(x_); }
  mpfr_ptr get() { return x_; }
  mpfr_srcptr get() const { return x_; }
  operator mpfr_ptr() { return x_; }
  operator mpfr_srcptr() const { return x_; }

 private:
  mpfr_t x_;
};

constexpr mpfr_prec_t kMaxZivBits = 1 << 16;

#include "strict_json.hpp"

// ---------------------------------------------------------------------------------------------
// F: the format and its rounding

struct Format {
  std::string name;
  long p = 53, emin = -1022, emax = 1023;
  mpfr_rnd_t rnd = MPFR_RNDN;
  mpfr_prec_t sum_bits() const { return emax - emin + p + 8; }
};

Format read_format(const json& f, const std::string& rounding) {
  only_keys(f, {"name", "kind", "precision", "emin", "emax", "subnormals", "infinity"}, "format");
  Format F;
  F.name = f.at("name").get<std::string>();
  if (f.at("kind").get<std::string>() != "floating")
    throw Unreadable("format " + F.name +
                     " is fixed point: not covered (covered: binary floating "
                     "formats with subnormals and infinities)");
  F.p = f.at("precision").get<long>();
  F.emin = f.at("emin").get<long>();
  F.emax = f.at("emax").get<long>();
  if (!f.at("subnormals").get<bool>() || !f.at("infinity").get<bool>())
    throw Unreadable("format " + F.name +
                     " has no subnormals or no infinities: not covered "
                     "(covered: binary floating formats with subnormals and infinities)");
  if (F.p < 2 || F.p > 4096 || F.emin >= 0 || F.emax <= 0 || F.emax > (1L << 20) ||
      F.emin < -(1L << 20))
    throw Unreadable("format " + F.name + ": parameters out of range");
  const std::map<std::string, std::array<long, 3>> known = {
      {"fp16", {11, -14, 15}},   {"bf16", {8, -126, 127}},    {"tf32", {11, -126, 127}},
      {"fp32", {24, -126, 127}}, {"fp64", {53, -1022, 1023}}, {"fp8e5m2", {3, -14, 15}}};
  // the name is the format (numeric::parse_format's spellings): a named format, p=P,e=E or
  // p=P,emin=A,emax=B, then the options subnormals=on and overflow=inf (the covered ones)
  std::string base = F.name;
  for (const char* option : {",overflow=inf", ",subnormals=on"}) {
    const std::string o(option);
    if (base.size() > o.size() && base.compare(base.size() - o.size(), o.size(), o) == 0)
      base.resize(base.size() - o.size());
  }
  std::array<long, 3> expected{};
  if (auto it = known.find(base); it != known.end()) {
    expected = it->second;
  } else {
    long p = 0, a = 0, b = 0, e = 0;
    char tail = 0;
    if (std::sscanf(base.c_str(), "p=%ld,emin=%ld,emax=%ld%c", &p, &a, &b, &tail) == 3 &&
        base == "p=" + std::to_string(p) + ",emin=" + std::to_string(a) +
                    ",emax=" + std::to_string(b)) {
      expected = {p, a, b};
    } else if (std::sscanf(base.c_str(), "p=%ld,e=%ld%c", &p, &e, &tail) == 2 && e >= 2 &&
               e <= 28 && base == "p=" + std::to_string(p) + ",e=" + std::to_string(e)) {
      const long emax = (1L << (e - 1)) - 1;
      expected = {p, 1 - emax, emax};
    } else {
      throw Unreadable("format name '" + F.name +
                       "' is not covered (covered: fp16, bf16, tf32, fp32, fp64, fp8e5m2, "
                       "p=P,e=E, p=P,emin=A,emax=B)");
    }
  }
  if (expected[0] != F.p || expected[1] != F.emin || expected[2] != F.emax)
    throw Invalid("format: " + F.name + " has precision " + std::to_string(expected[0]) +
                  ", emin " + std::to_string(expected[1]) + ", emax " +
                  std::to_string(expected[2]));
  if (rounding == "nearest-even")
    F.rnd = MPFR_RNDN;
  else if (rounding == "toward-zero")
    F.rnd = MPFR_RNDZ;
  else if (rounding == "upward")
    F.rnd = MPFR_RNDU;
  else if (rounding == "downward")
    F.rnd = MPFR_RNDD;
  else
    throw Unreadable("rounding " + rounding +
                     " is not covered (covered: nearest-even, toward-zero, upward, downward)");
  return F;
}

/// out (precision F.p) = x rounded into F (see the header: NUMBER MODEL). x is exact.
void round_to_F(mpfr_ptr out, mpfr_srcptr x, const Format& F) {
  if (mpfr_nan_p(x) || mpfr_inf_p(x) || mpfr_zero_p(x)) {
    mpfr_set(out, x, MPFR_RNDN);
    return;
  }
  const bool negative = mpfr_signbit(x) != 0;
  const long e = mpfr_get_exp(x) - 1;  // |x| in [2^e, 2^(e+1))
  const long bits = e >= F.emin ? F.p : F.p - (F.emin - e);
  if (bits <= 0) {  // |x| < s = 2^(emin-p+1), the smallest subnormal
    bool to_s = false;
    if (F.rnd == MPFR_RNDN) {
      Mp half(2);
      mpfr_set_ui_2exp(half, 1, F.emin - F.p, MPFR_RNDN);
      to_s = mpfr_cmpabs(x, half) > 0;
    } else if (F.rnd == MPFR_RNDU) {
      to_s = !negative;
    } else if (F.rnd == MPFR_RNDD) {
      to_s = negative;
    }
    if (to_s) {
      mpfr_set_ui_2exp(out, 1, F.emin - F.p + 1, MPFR_RNDN);
      if (negative) mpfr_neg(out, out, MPFR_RNDN);
    } else {
      mpfr_set_zero(out, negative ? -1 : 1);
    }
    return;
  }
  Mp t(bits);
  mpfr_set(t, x, F.rnd);  // correctly rounded to `bits` bits
  mpfr_set(out, t, MPFR_RNDN);
  if (mpfr_get_exp(out) - 1 > F.emax) {  // overflow
    const bool to_inf =
        F.rnd == MPFR_RNDN || (F.rnd == MPFR_RNDU && !negative) || (F.rnd == MPFR_RNDD && negative);
    if (to_inf) {
      mpfr_set_inf(out, negative ? -1 : 1);
    } else {  // ±max = ±(2 − 2^(1−p))·2^emax
      mpfr_set_ui_2exp(out, 1, F.emax + 1, MPFR_RNDN);
      Mp ulp(2);
      mpfr_set_ui_2exp(ulp, 1, F.emax + 1 - F.p, MPFR_RNDN);
      mpfr_sub(out, out, ulp, MPFR_RNDN);  // exact at p bits
      if (negative) mpfr_neg(out, out, MPFR_RNDN);
    }
  }
}

/// An element of F (precision F.p; NaN, ±inf, ±0 included).
using FValue = Mp;

/// Same element of F by bit pattern: NaN equals NaN, +0 differs from −0.
bool same_bits(mpfr_srcptr a, mpfr_srcptr b) {
  if (mpfr_nan_p(a) || mpfr_nan_p(b)) return mpfr_nan_p(a) && mpfr_nan_p(b);
  return mpfr_equal_p(a, b) && mpfr_signbit(a) == mpfr_signbit(b);
}

/// Same real value (−0 = +0; NaN equals nothing).
bool same_value(mpfr_srcptr a, mpfr_srcptr b) { return mpfr_equal_p(a, b) != 0; }

std::string text(mpfr_srcptr x) {
  char* s = nullptr;
  mpfr_asprintf(&s, "%Ra", x);
  std::string out = s ? s : "?";
  mpfr_free_str(s);
  return out;
}

FValue f_mul(mpfr_srcptr a, mpfr_srcptr b, const Format& F) {
  Mp t(2 * F.p + 2);
  mpfr_mul(t, a, b, F.rnd);  // exact for finite operands; IEEE specials otherwise
  FValue out(F.p);
  round_to_F(out, t, F);
  return out;
}

FValue f_add(mpfr_srcptr a, mpfr_srcptr b, const Format& F, bool subtract = false) {
  Mp t(F.sum_bits());
  // exact; the mode only decides the sign of an exact zero sum (IEEE: −0 only downward)
  if (subtract)
    mpfr_sub(t, a, b, F.rnd);
  else
    mpfr_add(t, a, b, F.rnd);
  FValue out(F.p);
  round_to_F(out, t, F);
  return out;
}

/// Reads an element of F written as hexadecimal text ("0x1.8p+3", "-0x0p+0", "inf", "nan").
FValue read_value(const json& j, const Format& F, const std::string& item) {
  if (!j.is_string()) throw Unreadable(item + ": expected a string (hexadecimal value)");
  const std::string s = j.get<std::string>();
  Mp x(F.p + 64);
  char* end = nullptr;
  const int t = mpfr_strtofr(x, s.c_str(), &end, 16, MPFR_RNDN);
  if (s.empty() || end == nullptr || *end != '\0')
    throw Unreadable(item + ": '" + s + "' is not a hexadecimal value");
  FValue out(F.p);
  round_to_F(out, x, F);
  if (t != 0 || !(same_bits(out, x) || mpfr_nan_p(x)))
    throw Invalid(item + ": " + s + " is not an element of " + F.name);
  if (mpfr_nan_p(x)) mpfr_set_nan(out);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Exact angles: the expression grammar of the certificate, evaluated in interval arithmetic

/// An enclosure [lo, hi] at one precision.
struct Interval {
  Mp lo, hi;
  explicit Interval(mpfr_prec_t w) : lo(w), hi(w) {}
};

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;
/// A node of an angle expression: rational q; π; β^e (β > 0, e rational); a ∘ b.
struct Expr {
  enum Kind { rational, pi, power, add, sub, mul, div } kind = rational;
  mpq_class q, beta, exponent;
  ExprPtr a, b;
};

/// Parses numeric::ExactReal::to_string text:
///   expr   := term ((" + " | " - ") term)*
///   term   := factor ("*" factor | "/(" expr ")")*
///   factor := "(" expr ")" | "pi" | RAT ["^(" RAT ")"]       RAT := -?digits("/"digits)?
class Parser {
 public:
  explicit Parser(std::string s) : s_(std::move(s)) {}
  ExprPtr parse() {
    auto e = expr();
    if (pos_ != s_.size()) fail();
    return e;
  }

 private:
  [[noreturn]] void fail() const {
    throw Unreadable("angle '" + s_ + "': cannot read it at character " + std::to_string(pos_));
  }
  void spaces() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool eat(const std::string& t) {
    if (s_.compare(pos_, t.size(), t) == 0) {
      pos_ += t.size();
      return true;
    }
    return false;
  }
  static ExprPtr node(Expr::Kind k, ExprPtr a, ExprPtr b) {
    auto n = std::make_shared<Expr>();
    n->kind = k;
    n->a = std::move(a);
    n->b = std::move(b);
    return n;
  }
  mpq_class rat() {
    const std::size_t start = pos_;
    if (pos_ < s_.size() && s_[pos_] == '-') ++pos_;
    auto digits = [&] {
      const std::size_t d = pos_;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) ++pos_;
      if (pos_ == d) fail();
    };
    digits();
    if (pos_ + 1 < s_.size() && s_[pos_] == '/' &&
        std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
      ++pos_;
      digits();
    }
    mpq_class q(s_.substr(start, pos_ - start));
    if (q.get_den() == 0) fail();
    q.canonicalize();
    return q;
  }
  ExprPtr factor() {
    if (eat("(")) {
      auto e = expr();
      if (!eat(")")) fail();
      return e;
    }
    if (eat("pi")) return node(Expr::pi, nullptr, nullptr);
    auto n = std::make_shared<Expr>();
    n->q = rat();
    if (eat("^(")) {
      n->kind = Expr::power;
      n->beta = n->q;
      n->q = 1;
      n->exponent = rat();
      if (!eat(")") || n->beta <= 0) fail();
    }
    return n;
  }
  ExprPtr term() {
    auto e = factor();
    for (;;) {
      if (eat("*")) {
        e = node(Expr::mul, e, factor());
      } else if (eat("/(")) {
        auto d = expr();
        if (!eat(")")) fail();
        e = node(Expr::div, e, d);
      } else {
        return e;
      }
    }
  }
  ExprPtr expr() {
    auto e = term();
    for (;;) {
      const std::size_t save = pos_;
      spaces();
      if (eat("+ ")) {
        spaces();
        e = node(Expr::add, e, term());
      } else if (eat("- ")) {
        spaces();
        e = node(Expr::sub, e, term());
      } else {
        pos_ = save;
        return e;
      }
    }
  }
  std::string s_;
  std::size_t pos_ = 0;
};

/// The exact value when the expression is rational (no π, no irrational power).
std::optional<mpq_class> rational_value(const Expr& e) {
  switch (e.kind) {
    case Expr::rational:
      return e.q;
    case Expr::pi:
    case Expr::power:
      return std::nullopt;  // β^e with a non-integer e is treated as irrational (enclosed)
    default:
      break;
  }
  auto a = rational_value(*e.a), b = rational_value(*e.b);
  if (!a || !b) return std::nullopt;
  switch (e.kind) {
    case Expr::add:
      return mpq_class(*a + *b);
    case Expr::sub:
      return mpq_class(*a - *b);
    case Expr::mul:
      return mpq_class(*a * *b);
    default:
      if (*b == 0) throw Unreadable("angle: division by zero");
      return mpq_class(*a / *b);
  }
}

void set_q(Interval& r, const mpq_class& q) {
  mpfr_set_q(r.lo, q.get_mpq_t(), MPFR_RNDD);
  mpfr_set_q(r.hi, q.get_mpq_t(), MPFR_RNDU);
}

void interval_mul(Interval& r, const Interval& a, const Interval& b) {
  const mpfr_prec_t w = mpfr_get_prec(r.lo);
  Mp t(w), lo(w), hi(w);
  bool first = true;
  for (mpfr_srcptr x : {a.lo.get(), a.hi.get()}) {
    for (mpfr_srcptr y : {b.lo.get(), b.hi.get()}) {
      mpfr_mul(t, x, y, MPFR_RNDD);
      if (first || mpfr_less_p(t, lo)) mpfr_set(lo, t, MPFR_RNDD);
      mpfr_mul(t, x, y, MPFR_RNDU);
      if (first || mpfr_greater_p(t, hi)) mpfr_set(hi, t, MPFR_RNDU);
      first = false;
    }
  }
  mpfr_set(r.lo, lo, MPFR_RNDD);
  mpfr_set(r.hi, hi, MPFR_RNDU);
}

/// Encloses e at w bits. Returns false when a divisor's enclosure contains 0 (refine).
bool enclose(const Expr& e, Interval& r) {
  const mpfr_prec_t w = mpfr_get_prec(r.lo);
  switch (e.kind) {
    case Expr::rational:
      set_q(r, e.q);
      return true;
    case Expr::pi:
      mpfr_const_pi(r.lo, MPFR_RNDD);
      mpfr_const_pi(r.hi, MPFR_RNDU);
      return true;
    case Expr::power: {  // β^e = exp(e·log β), each step rounded outward
      // cached by value (β, e, w): a head's angles are enclosed at every position
      thread_local std::map<std::tuple<std::string, std::string, mpfr_prec_t>, Interval> cache;
      const auto key = std::make_tuple(e.beta.get_str(), e.exponent.get_str(), w);
      if (auto it = cache.find(key); it != cache.end()) {
        mpfr_set(r.lo, it->second.lo, MPFR_RNDD);
        mpfr_set(r.hi, it->second.hi, MPFR_RNDU);
        return true;
      }
      Interval lb(w), ex(w), prod(w);
      set_q(lb, e.beta);
      mpfr_log(lb.lo, lb.lo, MPFR_RNDD);
      mpfr_log(lb.hi, lb.hi, MPFR_RNDU);
      set_q(ex, e.exponent);
      interval_mul(prod, lb, ex);
      mpfr_exp(r.lo, prod.lo, MPFR_RNDD);
      mpfr_exp(r.hi, prod.hi, MPFR_RNDU);
      if (cache.size() < 100000) cache.emplace(key, r);
      return true;
    }
    default:
      break;
  }
  Interval a(w), b(w);
  if (!enclose(*e.a, a) || !enclose(*e.b, b)) return false;
  switch (e.kind) {
    case Expr::add:
      mpfr_add(r.lo, a.lo, b.lo, MPFR_RNDD);
      mpfr_add(r.hi, a.hi, b.hi, MPFR_RNDU);
      return true;
    case Expr::sub:
      mpfr_sub(r.lo, a.lo, b.hi, MPFR_RNDD);
      mpfr_sub(r.hi, a.hi, b.lo, MPFR_RNDU);
      return true;
    case Expr::mul:
      interval_mul(r, a, b);
      return true;
    default: {  // div: a · [1/b.hi, 1/b.lo] when 0 ∉ b
      if (mpfr_sgn(b.lo.get()) * mpfr_sgn(b.hi.get()) <= 0) return false;
      Interval inv(w);
      mpfr_ui_div(inv.lo, 1, b.hi, MPFR_RNDD);
      mpfr_ui_div(inv.hi, 1, b.lo, MPFR_RNDU);
      interval_mul(r, a, inv);
      return true;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Ziv: a real given by enclosures, rounded into F

/// Rounds the real enclosed by `encl` (which fills [lo, hi] at the given precision, or returns
/// false to ask for more bits) into F. Throws Unreadable when 2^16 bits do not decide it.
FValue ziv(const std::function<bool(Interval&)>& encl, const Format& F, const std::string& what) {
  for (mpfr_prec_t w = F.p + 64; w <= kMaxZivBits; w *= 2) {
    Interval r(w);
    if (!encl(r)) continue;
    FValue a(F.p), b(F.p);
    round_to_F(a, r.lo, F);
    round_to_F(b, r.hi, F);
    if (same_bits(a, b)) return a;
  }
  throw Unreadable("cannot round " + what + " into " + F.name + " at 65536 bits: not checked");
}

FValue round_rational(const mpq_class& q, const Format& F, const std::string& what) {
  return ziv(
      [&](Interval& r) {
        set_q(r, q);
        return true;
      },
      F, what);
}

/// cos(2πt), sin(2πt) when rational (t·12 an integer with a rational value; Niven).
std::pair<std::optional<mpq_class>, std::optional<mpq_class>> exact_turn_trig(mpq_class t) {
  t -= mpz_class(t.get_num() / t.get_den());  // t mod 1, t ≥ 0 expected
  if (t < 0) t += 1;
  const mpq_class n12 = t * 12;
  if (n12.get_den() != 1) return {std::nullopt, std::nullopt};
  const long n = n12.get_num().get_si();
  static const char* cos_table[12] = {"1",  nullptr, "1/2",  "0", "-1/2", nullptr,
                                      "-1", nullptr, "-1/2", "0", "1/2",  nullptr};
  static const char* sin_table[12] = {"0", "1/2",  nullptr, "1",  nullptr, "1/2",
                                      "0", "-1/2", nullptr, "-1", nullptr, "-1/2"};
  auto get = [](const char* s) {
    return s ? std::optional<mpq_class>(mpq_class(s)) : std::nullopt;
  };
  return {get(cos_table[n]), get(sin_table[n])};
}

/// An angle: 2π·t exactly (t rational), or an expression (times an integer position).
struct Angle {
  std::optional<mpq_class> turn;  ///< t, the angle is 2πt
  ExprPtr expr;                   ///< otherwise the angle is expr · factor
  mpz_class factor = 1;
};

/// Encloses the real angle a in r at r's precision (2π·t outward, or expr · factor through
/// enclose); false where enclose cannot.
bool enclose_angle(const Angle& a, Interval& r) {
  if (a.turn) {
    Interval t(mpfr_get_prec(r.lo)), two_pi(mpfr_get_prec(r.lo));
    set_q(t, *a.turn);
    mpfr_const_pi(two_pi.lo, MPFR_RNDD);
    mpfr_const_pi(two_pi.hi, MPFR_RNDU);
    mpfr_mul_2ui(two_pi.lo, two_pi.lo, 1, MPFR_RNDD);
    mpfr_mul_2ui(two_pi.hi, two_pi.hi, 1, MPFR_RNDU);
    interval_mul(r, t, two_pi);
    return true;
  }
  Interval e(mpfr_get_prec(r.lo)), f(mpfr_get_prec(r.lo));
  if (!enclose(*a.expr, e)) return false;
  set_q(f, mpq_class(a.factor));
  interval_mul(r, e, f);
  return true;
}

/// Encloses cos y (sine: sin y) for every y in x, in r: f(x.lo) rounded outward, widened by
/// x's width (|f(y) − f(x.lo)| ≤ |y − x.lo| ≤ width for f = cos, sin).
void enclose_trig(const Interval& x, bool sine, Interval& r) {
  Mp width(mpfr_get_prec(r.lo));
  mpfr_sub(width, x.hi, x.lo, MPFR_RNDU);
  if (sine) {
    mpfr_sin(r.lo, x.lo, MPFR_RNDD);
    mpfr_sin(r.hi, x.lo, MPFR_RNDU);
  } else {
    mpfr_cos(r.lo, x.lo, MPFR_RNDD);
    mpfr_cos(r.hi, x.lo, MPFR_RNDU);
  }
  mpfr_sub(r.lo, r.lo, width, MPFR_RNDD);
  mpfr_add(r.hi, r.hi, width, MPFR_RNDU);
}

/// The realised (cos, sin) of the real angle a, each rounded once into F.
std::pair<FValue, FValue> cos_sin_of_angle(const Angle& a, const Format& F,
                                           const std::string& what) {
  std::optional<mpq_class> exact_angle;
  if (a.turn) {
    auto [c, s] = exact_turn_trig(*a.turn);
    if (c && s) return {round_rational(*c, F, what), round_rational(*s, F, what)};
    if (*a.turn == 0) exact_angle = mpq_class(0);
  } else if (a.factor == 0) {  // θ·0 = 0 exactly, whatever θ is
    exact_angle = mpq_class(0);
  } else if (auto q = rational_value(*a.expr)) {
    exact_angle = *q * mpq_class(a.factor);
  }
  if (exact_angle && *exact_angle == 0)
    return {round_rational(1, F, what), round_rational(0, F, what)};
  auto trig = [&](bool sine) {
    std::optional<mpq_class> exact;
    if (a.turn) exact = sine ? exact_turn_trig(*a.turn).second : exact_turn_trig(*a.turn).first;
    if (exact) return round_rational(*exact, F, what);
    return ziv(
        [&](Interval& r) {
          Interval x(mpfr_get_prec(r.lo));
          if (!enclose_angle(a, x)) return false;
          enclose_trig(x, sine, r);
          return true;
        },
        F, what);
  };
  return {trig(false), trig(true)};
}

// ---------------------------------------------------------------------------------------------
// Realised rotations (THEORY §3)

struct Block {
  std::optional<mpq_class> turn;  ///< θ = 2π·turn
  ExprPtr theta;                  ///< otherwise θ
};

std::vector<Block> read_blocks(const json& j) {
  std::vector<Block> blocks;
  for (const auto& b : j) {
    Block out;
    only_keys(b, {"theta", "turn"}, "blocks");
    if (b.size() != 1)
      throw Unreadable("blocks: each block is {\"theta\": ...} or {\"turn\": ...}");
    if (b.contains("turn")) {
      mpq_class t(b.at("turn").get<std::string>());
      if (t.get_den() == 0) throw Unreadable("blocks: bad turn");
      t.canonicalize();
      if (t < 0) throw Unreadable("blocks: negative turn");
      out.turn = t;
    } else {
      out.theta = Parser(b.at("theta").get<std::string>()).parse();
    }
    blocks.push_back(std::move(out));
  }
  if (blocks.empty()) throw Unreadable("blocks: none");
  return blocks;
}

#include "schedule_table.hpp"

mpz_class to_mpz(std::uint64_t v) { return mpz_class(std::to_string(v)); }

class Rotations {
 public:
  Rotations(std::vector<Block> blocks, std::string realisation, Format F)
      : blocks_(std::move(blocks)), r_(std::move(realisation)), F_(std::move(F)) {
    if (r_ != "r1" && r_ != "r2" && r_ != "r3")
      throw Unreadable("realization " + r_ + " is not covered (covered: r1, r2, r3)");
    if (r_ == "r3") {
      for (const auto& b : blocks_)
        if (!b.turn) throw Invalid("r3 needs every block to be a turn a/m");
    }
    if (r_ == "r2") {
      for (std::size_t d = 0; d < blocks_.size(); ++d) {
        const Block& b = blocks_[d];
        Angle a;
        const std::string what = "theta_hat of block " + std::to_string(d);
        if (b.turn) {
          a.turn = *b.turn;
        } else {
          a.expr = b.theta;
        }
        theta_hat_.push_back(round_angle(a, what));
      }
    }
  }
  std::size_t blocks() const { return blocks_.size(); }
  const Format& format() const { return F_; }
  const Block& block(std::size_t d) const { return blocks_[d]; }
  const std::vector<Block>& all_blocks() const { return blocks_; }
  const std::string& realisation() const { return r_; }
  /// r2: θ̂_d = round_F(θ_d).
  const FValue& theta_hat(std::size_t d) const { return theta_hat_[d]; }

  /// Block d of R̂_i: (cos, sin) in F.
  const std::pair<FValue, FValue>& at(std::size_t d, std::uint64_t i) {
    const Block& b = blocks_[d];
    const std::string what = "R^_" + std::to_string(i) + " block " + std::to_string(d);
    if (r_ != "r2" && b.turn) {  // depends on (a·i) mod m only: one table entry
      const mpz_class m = b.turn->get_den();
      const mpz_class residue = (b.turn->get_num() * to_mpz(i)) % m;
      const std::string key = std::to_string(d) + ":" + residue.get_str();
      auto it = table_.find(key);
      if (it == table_.end()) {
        Angle a;
        a.turn = mpq_class(residue, m);
        it = table_.emplace(key, cos_sin_of_angle(a, F_, what)).first;
      }
      return it->second;
    }
    last_ = std::make_unique<std::pair<FValue, FValue>>(compute(d, i, what));
    return *last_;
  }

 private:
  FValue round_angle(const Angle& a, const std::string& what) {
    if (a.turn) {
      if (*a.turn == 0) return round_rational(0, F_, what);
      return ziv([&](Interval& r) { return enclose_angle(a, r); }, F_, what);
    }
    if (auto q = rational_value(*a.expr)) return round_rational(*q, F_, what);
    return ziv([&](Interval& r) { return enclose(*a.expr, r); }, F_, what);
  }

  std::pair<FValue, FValue> compute(std::size_t d, std::uint64_t i, const std::string& what) {
    const Block& b = blocks_[d];
    if (r_ != "r2") {  // r1: the exact angle θ·i
      Angle a;
      a.expr = b.theta;
      a.factor = to_mpz(i);
      return cos_sin_of_angle(a, F_, what);
    }
    // r2: φ = round(θ̂ · round(i)), then cos φ, sin φ
    Mp pos(72);
    mpfr_set_z(pos, to_mpz(i).get_mpz_t(), MPFR_RNDN);  // exact: 64 ≤ 72 bits
    FValue i_hat(F_.p);
    round_to_F(i_hat, pos, F_);
    FValue phi = f_mul(theta_hat_[d], i_hat, F_);
    if (mpfr_nan_p(phi) || mpfr_inf_p(phi)) {
      FValue nan(F_.p);
      mpfr_set_nan(nan);
      return {nan, FValue(nan)};
    }
    if (mpfr_zero_p(phi)) {  // cos(±0) = 1, sin(±0) = ±0
      FValue one(F_.p);
      mpfr_set_ui(one, 1, MPFR_RNDN);
      return {one, FValue(phi)};
    }
    mpq_class q;
    mpfr_get_q(q.get_mpq_t(), phi);
    Angle a;
    a.expr = std::make_shared<Expr>(Expr{Expr::rational, q, 0, 0, nullptr, nullptr});
    return cos_sin_of_angle(a, F_, what);
  }

  std::vector<Block> blocks_;
  std::string r_;
  Format F_;
  std::vector<FValue> theta_hat_;
  std::map<std::string, std::pair<FValue, FValue>> table_;
  std::unique_ptr<std::pair<FValue, FValue>> last_;
};

std::uint64_t u64(const json& j, const std::string& key) {
  if (!j.contains(key) || !j.at(key).is_number_unsigned())
    throw Unreadable("'" + key + "': expected a non-negative integer");
  return j.at(key).get<std::uint64_t>();
}

// ---------------------------------------------------------------------------------------------
// The census certificate

#include "census_check.hpp"

// ---------------------------------------------------------------------------------------------
// The horizon certificate

/// An exact decimal as ropesim writes it (numeric::exact_decimal: "-0.001953125", "12",
/// "5.9604644775390625e-8", "1e6") as a rational. The exponent is at most 6 digits.
mpq_class read_decimal(const std::string& s, const std::string& item) {
  std::size_t k = 0;
  const bool negative = !s.empty() && s[0] == '-';
  if (negative) ++k;
  std::string digits;
  long scale = 0;
  bool point = false;
  for (; k < s.size() && s[k] != 'e'; ++k) {
    if (s[k] == '.' && !point) {
      point = true;
    } else if (std::isdigit(static_cast<unsigned char>(s[k]))) {
      digits += s[k];
      if (point) ++scale;
    } else {
      throw Unreadable(item + ": '" + s + "' is not an exact decimal");
    }
  }
  if (digits.empty()) throw Unreadable(item + ": empty decimal");
  if (k < s.size()) {  // 'e', an optional '-', 1 to 6 digits
    std::size_t e = k + 1;
    const bool down = e < s.size() && s[e] == '-';
    if (down) ++e;
    const std::string exponent = s.substr(e);
    if (exponent.empty() || exponent.size() > 6 ||
        !std::all_of(exponent.begin(), exponent.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      throw Unreadable(item + ": '" + s + "' is not an exact decimal");
    }
    scale += down ? std::stol(exponent) : -std::stol(exponent);
  }
  mpz_class ten;
  mpz_ui_pow_ui(ten.get_mpz_t(), 10, static_cast<unsigned long>(scale < 0 ? -scale : scale));
  const mpz_class n(digits, 10);  // base 10: GMP's default base 0 reads "025" as octal 21
  mpq_class q = scale < 0 ? mpq_class(n * ten) : mpq_class(n, ten);
  q.canonicalize();
  return negative ? mpq_class(-q) : q;
}

/// round_F(s · cos a) (or sin a), s rational.
FValue scaled_trig(const Angle& a, const mpq_class& s, bool sine, const Format& F,
                   const std::string& what) {
  std::optional<mpq_class> exact;
  if (a.turn) {
    auto [c, sn] = exact_turn_trig(*a.turn);
    exact = sine ? sn : c;
  } else if (auto q = rational_value(*a.expr); a.factor == 0 || (q && *q == 0)) {
    exact = sine ? mpq_class(0) : mpq_class(1);
  }
  if (exact) return round_rational(mpq_class(s * *exact), F, what);
  return ziv(
      [&](Interval& r) {
        const mpfr_prec_t w = mpfr_get_prec(r.lo);
        Interval x(w), t(w), sc(w);
        if (!enclose_angle(a, x)) return false;
        enclose_trig(x, sine, t);
        set_q(sc, s);
        interval_mul(r, t, sc);
        return true;
      },
      F, what);
}

class Head {
 public:
  Head(const json& c, Rotations& R, const FValue& C, std::uint64_t k) : R_(R) {
    const Format& F = R.format();
    const auto& weights = c.at("weights");
    if (weights.size() != R.blocks()) throw Invalid("weights: one per block expected");
    const auto& blocks = R.all_blocks();  // the schedule's own (checked_schedule)
    mpq_class Cq;
    mpfr_get_q(Cq.get_mpq_t(), C);
    for (std::size_t d = 0; d < R.blocks(); ++d) {
      mpq_class w(weights[d].get<std::string>());
      if (w.get_den() == 0) throw Unreadable("weights: bad rational");
      w.canonicalize();
      // bias (round(C·w·cos kθ), round(−C·w·sin kθ)): enclose cos kθ, sin kθ, scale exactly
      Angle a;
      if (blocks[d].turn) {
        mpq_class t = *blocks[d].turn * mpq_class(to_mpz(k));
        t -= mpz_class(t.get_num() / t.get_den());
        a.turn = t;
      } else {
        a.expr = blocks[d].theta;
        a.factor = to_mpz(k);
      }
      const std::string what = "query bias of block " + std::to_string(d);
      bias_.push_back(scaled_trig(a, mpq_class(Cq * w), false, F, what));
      bias_.push_back(scaled_trig(a, mpq_class(-Cq * w), true, F, what));
    }
  }

  /// The query bias, 2 per block: (round_F(C·w_d·cos kθ_d), round_F(−C·w_d·sin kθ_d)).
  const std::vector<FValue>& bias() const { return bias_; }

  /// q_i (or k_i when key) for all blocks, 2 per block.
  std::vector<FValue> vector(std::uint64_t i, bool key) {
    const Format& F = R_.format();
    std::vector<FValue> out;
    FValue one(F.p), zero(F.p);
    mpfr_set_ui(one, 1, MPFR_RNDN);
    mpfr_set_zero(zero, 1);
    for (std::size_t d = 0; d < R_.blocks(); ++d) {
      const auto cs = R_.at(d, i);
      const FValue& x0 = key ? one : bias_[2 * d];
      const FValue& x1 = key ? zero : bias_[2 * d + 1];
      // THEORY §2.1: (rnd(rnd(c·x0) − rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1)))
      out.push_back(f_add(f_mul(cs.first, x0, F), f_mul(cs.second, x1, F), F, true));
      out.push_back(f_add(f_mul(cs.second, x0, F), f_mul(cs.first, x1, F), F));
    }
    return out;
  }

 private:
  Rotations& R_;
  std::vector<FValue> bias_;
};

/// Ŝ = q·k, sequential (THEORY §2.1): each product rounded, each partial sum rounded.
FValue score(const std::vector<FValue>& q, const std::vector<FValue>& k, const Format& F) {
  FValue acc = f_mul(q[0], k[0], F);
  for (std::size_t t = 1; t < q.size(); ++t) acc = f_add(acc, f_mul(q[t], k[t], F), F);
  return acc;
}

/// a − b ≥ f exactly, both finite (a NaN or infinite score fails, as in the scan).
bool leads_by(mpfr_srcptr a, mpfr_srcptr b, mpfr_srcptr f, const Format& F) {
  if (!mpfr_number_p(a) || !mpfr_number_p(b)) return false;
  Mp d(F.sum_bits());
  mpfr_sub(d, a, b, MPFR_RNDN);  // exact for finite a, b
  if (mpfr_nan_p(d)) return false;
  return mpfr_greaterequal_p(d, f) != 0;
}

/// f_large (THEORY §1): round(exp(−f)) = 0 and, for the predecessor f⁻ > 0 in F,
/// round(exp(−f⁻)) ≠ 0 (exp is monotone, so f is the smallest such element of F).
void check_f_large(const FValue& f_large, const Format& F) {
  if (!mpfr_number_p(f_large) || mpfr_sgn(f_large.get()) <= 0)
    throw Invalid("f_large: must be > 0");
  auto exp_minus = [&](mpfr_srcptr f) {
    return ziv(
        [&](Interval& r) {
          Mp m(mpfr_get_prec(r.lo));
          mpfr_neg(m, f, MPFR_RNDN);  // exact
          mpfr_exp(r.lo, m, MPFR_RNDD);
          mpfr_exp(r.hi, m, MPFR_RNDU);
          return true;
        },
        F, "exp(-f_large)");
  };
  if (!mpfr_zero_p(exp_minus(f_large)))
    throw Invalid("f_large: exp(-" + text(f_large) + ") does not round to 0 in " + F.name);
  FValue below(f_large);
  mpfr_nextbelow(below);  // the predecessor in F (f_large is normal: p bits apart)
  if (mpfr_sgn(below.get()) > 0 && mpfr_zero_p(exp_minus(below)))
    throw Invalid("f_large: not the smallest: exp(-" + text(below) + ") rounds to 0 already");
}

constexpr double kMaxHorizonScores = 2e8;

/// The scan's evidence: every score of every certified query recomputed; the listed target and
/// largest other score (first j on ties) must match, and the lead must be ≥ f_large.
void check_scan(const json& c, const Rotations& R, Head& head, const Format& F,
                const FValue& f_large, std::uint64_t k, std::uint64_t n_max, bool at_limit) {
  const std::uint64_t last = at_limit ? n_max + 1 : n_max + 2;
  if (0.5 * static_cast<double>(last + 1) * static_cast<double>(last + 1) *
          static_cast<double>(R.blocks()) >
      kMaxHorizonScores)
    throw Unreadable("n_max: checking it needs more than 2e8 block scores: not checked");
  std::vector<std::vector<FValue>> keys;
  for (std::uint64_t j = 0; j <= last; ++j) keys.push_back(head.vector(j, true));

  const auto& queries = c.at("queries");
  const std::uint64_t first = k + 1;
  const std::uint64_t expected = n_max + 1 >= first ? n_max + 1 - first + 1 : 0;
  if (queries.size() != expected)
    throw Invalid("queries: " + std::to_string(queries.size()) + " listed, " +
                  std::to_string(expected) + " expected (k+1..n_max+1)");
  for (std::uint64_t i = first; i <= n_max + 1; ++i) {
    const json& q = queries[i - first];
    only_keys(q, {"i", "target", "competitor", "competitor_score"}, "queries");
    const std::string item = "query i = " + std::to_string(i);
    if (u64(q, "i") != i) throw Invalid(item + ": listed out of order");
    const auto qi = head.vector(i, false);
    const FValue target = score(qi, keys[i - k], F);
    std::optional<std::uint64_t> best;
    FValue best_score(F.p);
    for (std::uint64_t j = 0; j < i; ++j) {
      if (j == i - k) continue;
      FValue s = score(qi, keys[j], F);
      if (mpfr_nan_p(s))
        throw Invalid(item + ": the score of j = " + std::to_string(j) + " is NaN");
      if (!best || mpfr_greater_p(s, best_score)) {
        best = j;
        best_score = s;
      }
    }
    if (!same_value(target, read_value(q.at("target"), F, item + " target")))
      throw Invalid(item + ": target score is " + text(target) + ", not " +
                    q.at("target").get<std::string>());
    if (best) {
      if (q.at("competitor").is_null() || u64(q, "competitor") != *best)
        throw Invalid(item + ": the largest competitor is j = " + std::to_string(*best));
      if (!same_value(best_score, read_value(q.at("competitor_score"), F, item)))
        throw Invalid(item + ": competitor score is " + text(best_score) + ", not " +
                      q.at("competitor_score").get<std::string>());
      if (!leads_by(target, best_score, f_large, F))
        throw Invalid(item + ": target " + text(target) + " does not lead competitor j = " +
                      std::to_string(*best) + " (" + text(best_score) + ") by f_large");
    } else if (!q.at("competitor").is_null()) {
      throw Invalid(item + ": no competitor exists");
    }
  }
}

/// E_v: a bound on |Ŝ_{i,j} − C·Σ_d w_d cos(θ_d(i−k−j))| for every i, j, for r1/r3 (cos and
/// sin of the exact angle rounded once) and sequential sums, by forward error analysis with
/// |rnd(x) − x| ≤ u|x| + η for |x| ≤ max F (u = 2^−p, η = 2^(emin−p) under nearest-even; twice
/// both under directed rounding). Per block with A = |C·w_d|: realised cos, sin within
/// e1 = u + η and of magnitude ≤ 1; the bias within eb = uA + η of C·w_d·(cos kθ, −sin kθ);
/// a query product within ep = e1(A + eb) + eb of the exact one before rounding and
/// er = u(A + eb) + η for its rounding; a query component within eq = 2(ep + er) +
/// u(A + 2(ep + er)) + η of C·w_d·(cos, sin)(θi − kθ) (whose norm is A); a score term within
/// et = eq + A·e1 + u(A + eq) + η of its exact value, of magnitude ≤ mt = (A + eq)(1 + u) + η.
/// The 2B − 1 rounded additions of terms of total magnitude T = Σ mt add at most
/// (2B−1)(uT + η)/(1 − (2B−1)u) (each partial sum is within the accumulated error of a sum of
/// terms; unrotated pairs add exact zeros). E_v = Σ et + that. Refuses (Unreadable) when an
/// intermediate bound could exceed max F (then the model does not hold: overflow).
mpq_class own_error_bound(const json& c, const Format& F, const FValue& C, std::size_t B) {
  mpq_class u, eta, one = 1;
  const bool nearest = F.rnd == MPFR_RNDN;
  auto pow2 = [](long e) {
    mpq_class q = 1;
    if (e >= 0)
      mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<unsigned long>(e));
    else
      mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<unsigned long>(-e));
    return q;
  };
  u = pow2(nearest ? -F.p : 1 - F.p);
  eta = pow2(nearest ? F.emin - F.p : F.emin - F.p + 1);
  const mpq_class max_f = pow2(F.emax + 1) - pow2(F.emax + 1 - F.p);
  mpq_class Cq;
  mpfr_get_q(Cq.get_mpq_t(), C);
  const mpq_class e1 = u + eta;
  mpq_class sum_et = 0, T = 0, largest = 0;
  for (std::size_t d = 0; d < B; ++d) {
    mpq_class w(c.at("weights").at(d).get<std::string>());
    w.canonicalize();
    const mpq_class A = abs(Cq * w);
    const mpq_class eb = u * A + eta, ep = e1 * (A + eb) + eb, er = u * (A + eb) + eta;
    const mpq_class eq = 2 * (ep + er) + u * (A + 2 * (ep + er)) + eta;
    const mpq_class et = eq + A * e1 + u * (A + eq) + eta;
    const mpq_class mt = (A + eq) * (1 + u) + eta;
    sum_et += 2 * et;
    T += 2 * mt;
    for (const mpq_class& m : {mpq_class(A + eb), mpq_class(A + 2 * (ep + er)), mt})
      if (m > largest) largest = m;
  }
  const mpq_class n = static_cast<unsigned long>(2 * B - 1);
  if (n * u >= 1) throw Unreadable("candidates: too many blocks for the error analysis");
  const mpq_class sums = n * (u * T + eta) / (1 - n * u);
  if (T + sums > largest) largest = T + sums;
  if (largest * (1 + u) + eta > max_f)
    throw Unreadable("candidates: an intermediate could overflow " + F.name +
                     ": the error analysis does not apply (not checked)");
  return sum_et + sums;
}

#include "fast_f.hpp"

/// `ropesim-verify --audit-bounds FILE.json` (tests only): check_candidates also compares its
/// split bound with a second evaluation and with realised errors (printed before the verdict).
bool g_audit_bounds = false;

/// The most block scores the per-query path of check_candidates computes when FastF is fast
/// (about 5 ns each; MPFR's operations otherwise, under kMaxHorizonScores).
/// proofs/reports/certificate.hpp kMaxHorizonCertificateFastScores is the same number.
constexpr double kMaxHorizonFastScores = 4e9;

#include "fast_trig.hpp"

/// Where realise_positions starts: the binary64 path (fast_trig.hpp), the 64-bit MPFR path, or
/// Rotations::at for every value (Ziv's loop, the reference). Each later path takes what the
/// earlier one leaves undecided.
enum class TablePath { binary64, mpfr64, ziv };

/// How many (position, block) entries each path decided.
struct TableStats {
  std::uint64_t binary64 = 0, mpfr64 = 0, ziv = 0;
};

/// The realised rotations (ĉ, ŝ) of R̂_n for the listed positions n (each ≤ 2^32) and every
/// block d, as doubles (elements of F, exact), at [(row·B + d)·2] and [(row·B + d)·2 + 1]. Each
/// is round_F of cos and sin of the exact angle θ_d·n (r1; r3's table entry is the same real).
/// 1. binary64 (fast_trig.hpp; F nearest-even with 2 ≤ p ≤ 52 inside binary64): v within
///    kTrigError = 2^−48 of cos θ_d n, proven there; when both ends of [v − 2^−48, v + 2^−48]
///    (widened outward by one binary64 step) round to the same element of F (FastF::round_double),
///    that is the value, since rounding is monotone.
/// 2. A block with an expression θ_d: θ_d is enclosed once at 64 bits, θ_d·n scaled outward,
///    cos and sin taken at the lower end (MPFR, nearest) and widened by one ulp and by the
///    enclosure's width (|cos y − cos x| ≤ |y − x|); when both ends round to the same element
///    of F, that is the value.
/// 3. Otherwise, and for turn blocks, Rotations::at (Ziv's loop, the reference).
/// Positions are split over up to 4 threads (MPFR's caches are thread-local); Rotations::at runs
/// on the calling thread.
std::vector<double> realise_positions(Rotations& R, const std::vector<std::uint64_t>& positions,
                                      TablePath first = TablePath::binary64,
                                      TableStats* stats = nullptr) {
  const Format& F = R.format();
  const std::size_t B = R.blocks();
  const std::size_t N = positions.size();
  std::vector<double> table(N * B * 2, 0.0);
  std::vector<char> done(N * B, 0);
  constexpr mpfr_prec_t w = 64;
  std::vector<Interval> theta;
  std::vector<bool> expr(B, false);
  std::vector<TurnFraction> turns(B);
  const FastF ar(F);
  const bool binary64 = first == TablePath::binary64 && ar.rounds_doubles();
  for (std::size_t d = 0; d < B; ++d) {
    theta.emplace_back(w);
    const Block& b = R.block(d);
    if (first != TablePath::ziv && !b.turn && enclose(*b.theta, theta.back())) expr[d] = true;
    if (binary64) turns[d] = turn_fraction(b);
  }
  std::vector<std::uint64_t> by_binary64(4, 0), by_mpfr64(4, 0);
  auto work = [&](std::size_t first_row, std::size_t step, std::size_t th) {
    Mp lo(w), hi(w), s(w), c(w), width(w), end_lo(w), end_hi(w);
    FValue a(F.p), b(F.p);
    // round_F(v) when every real within kTrigError of v rounds there (false otherwise)
    auto decided = [&](double v, double& out) {
      const double x = ar.round_double(std::nextafter(v - kTrigError, -HUGE_VAL));
      const double y = ar.round_double(std::nextafter(v + kTrigError, HUGE_VAL));
      out = x;
      return std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y);
    };
    for (std::size_t row = first_row; row < N; row += step) {
      const std::uint64_t n = positions[row];
      for (std::size_t d = 0; d < B; ++d) {
        double* out = &table[(row * B + d) * 2];
        if (binary64 && turns[d].valid && n <= (std::uint64_t{1} << 32)) {
          double cv = 0, sv = 0;
          cos_sin_of_turn(turns[d].T * static_cast<U128>(n), cv, sv);  // mod 2^128
          if (decided(cv, out[0]) && decided(sv, out[1])) {
            done[row * B + d] = 1;
            ++by_binary64[th];
            continue;
          }
        }
        if (!expr[d]) continue;
        mpfr_mul_ui(lo, theta[d].lo, static_cast<unsigned long>(n), MPFR_RNDD);
        mpfr_mul_ui(hi, theta[d].hi, static_cast<unsigned long>(n), MPFR_RNDU);
        mpfr_sub(width, hi, lo, MPFR_RNDU);
        mpfr_sin_cos(s, c, lo, MPFR_RNDN);
        bool same = true;
        for (int t = 0; t < 2 && same; ++t) {
          mpfr_srcptr v = t == 0 ? c.get() : s.get();
          mpfr_set(end_lo, v, MPFR_RNDN);
          mpfr_nextbelow(end_lo);
          mpfr_sub(end_lo, end_lo, width, MPFR_RNDD);
          mpfr_set(end_hi, v, MPFR_RNDN);
          mpfr_nextabove(end_hi);
          mpfr_add(end_hi, end_hi, width, MPFR_RNDU);
          round_to_F(a, end_lo, F);
          round_to_F(b, end_hi, F);
          same = same_bits(a, b);
          out[t] = mpfr_get_d(a, MPFR_RNDN);
        }
        if (same) {
          done[row * B + d] = 1;
          ++by_mpfr64[th];
        }
      }
    }
  };
  const unsigned hw = std::thread::hardware_concurrency();
  const std::size_t threads = std::min<std::size_t>(std::max(1u, std::min(hw, 4u)), N);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t, threads, t);
  if (threads > 0) work(0, threads, 0);
  for (auto& t : pool) t.join();
  std::uint64_t by_ziv = 0;
  for (std::size_t row = 0; row < N; ++row)
    for (std::size_t d = 0; d < B; ++d) {
      if (done[row * B + d]) continue;
      const auto& cs = R.at(d, positions[row]);
      table[(row * B + d) * 2] = mpfr_get_d(cs.first, MPFR_RNDN);  // exact: F inside binary64
      table[(row * B + d) * 2 + 1] = mpfr_get_d(cs.second, MPFR_RNDN);
      ++by_ziv;
    }
  if (stats) {
    for (std::size_t t = 0; t < 4; ++t) {
      stats->binary64 += by_binary64[t];
      stats->mpfr64 += by_mpfr64[t];
    }
    stats->ziv += by_ziv;
  }
  return table;
}

/// realise_positions for n = 0..last: the horizon check's table, row n at [n·2B].
std::vector<double> realised_table(Rotations& R, std::uint64_t last, TableStats* stats = nullptr) {
  std::vector<std::uint64_t> positions(static_cast<std::size_t>(last + 1));
  for (std::size_t n = 0; n < positions.size(); ++n) positions[n] = n;
  return realise_positions(R, positions, TablePath::binary64, stats);
}

/// `ropesim-verify --self-test-trig N`: the table of fast_trig.hpp (realise_positions from the
/// binary64 path) against the MPFR table (from the 64-bit MPFR path) bit for bit, on the
/// positions 0..N−1 and 2^32 − 16..2^32 − 1 of real heads (llama3-8b, llama3.1-8b's scaled
/// angles, single:g=1, a periodic head of turns) in bf16, fp16, fp32, p=5,e=5 and
/// p=44 and p=52 (emin −126, emax 127: where the bound 2^−48 decides about a third of the
/// values and none); on the first 64 and the last 16 positions also against Rotations::at alone
/// (Ziv's loop); and the largest |v − cos θn|, |v − sin θn| of the binary64 values over
/// llama3-8b's positions, against cos and sin at 200 bits, in units of 2^−53, which must not
/// exceed kTrigError (32). Prints one line per head and format; exit 1 on the first
/// disagreement or an error above the bound.
int self_test_trig(long n) {
  const std::vector<std::array<long, 3>> formats = {{8, -126, 127},  {11, -14, 15},
                                                    {24, -126, 127}, {5, -14, 15},
                                                    {44, -126, 127}, {52, -126, 127}};
  std::vector<std::uint64_t> positions;
  for (long i = 0; i < n; ++i) positions.push_back(static_cast<std::uint64_t>(i));
  for (std::uint64_t i = (std::uint64_t{1} << 32) - 16; i < (std::uint64_t{1} << 32); ++i)
    positions.push_back(i);
  std::vector<std::uint64_t> few;
  for (std::size_t r = 0; r < positions.size(); ++r)
    if (r < 64 || r + 16 >= positions.size()) few.push_back(positions[r]);
  for (const char* schedule :
       {"llama3-8b", "llama3.1-8b", "single:g=1", "periodic:1/3,2/7,5/1000003"}) {
    const std::vector<Block> blocks = schedule_definition(schedule);
    const std::size_t B = blocks.size();
    if (std::string(schedule) == "llama3-8b") {  // the binary64 values' largest error
      double worst[2] = {0, 0};
      constexpr mpfr_prec_t w = 200;
      Mp x(w), c(w), s(w), v(w);
      for (std::size_t d = 0; d < B; ++d) {
        const TurnFraction tf = turn_fraction(blocks[d]);
        Interval theta(w + 64);
        if (!tf.valid || !enclose(*blocks[d].theta, theta)) return 1;
        for (std::uint64_t p : positions) {
          double cv = 0, sv = 0;
          cos_sin_of_turn(tf.T * static_cast<U128>(p), cv, sv);
          mpfr_mul_ui(x, theta.lo, static_cast<unsigned long>(p), MPFR_RNDN);  // ≤ 2^−220 off
          mpfr_sin_cos(s, c, x, MPFR_RNDN);
          for (int t = 0; t < 2; ++t) {
            mpfr_set_d(v, t == 0 ? cv : sv, MPFR_RNDN);
            mpfr_sub(v, v, t == 0 ? c : s, MPFR_RNDN);
            worst[t] = std::max(worst[t], std::fabs(mpfr_get_d(v, MPFR_RNDU)) * 0x1p53);
          }
        }
      }
      char line[160];
      std::snprintf(line, sizeof line,
                    "%s: largest |v - cos| %.2f, |v - sin| %.2f units of 2^-53 over %zu "
                    "positions x %zu blocks (bound %.0f)\n",
                    schedule, worst[0], worst[1], positions.size(), B, kTrigError * 0x1p53);
      std::cout << line;
      if (std::max(worst[0], worst[1]) > kTrigError * 0x1p53) {
        std::cout << "BOUND EXCEEDED: kTrigError is " << kTrigError * 0x1p53 << " units of 2^-53\n";
        return 1;
      }
    }
    for (const auto& bounds : formats) {
      Format F;
      F.p = bounds[0];
      F.emin = bounds[1];
      F.emax = bounds[2];
      F.name = "p=" + std::to_string(F.p) + ",emin=" + std::to_string(F.emin) +
               ",emax=" + std::to_string(F.emax);
      F.rnd = MPFR_RNDN;
      Rotations R(blocks, "r1", F);
      TableStats fast_stats;
      const auto fast = realise_positions(R, positions, TablePath::binary64, &fast_stats);
      const auto mpfr = realise_positions(R, positions, TablePath::mpfr64);
      const auto fast_few = realise_positions(R, few, TablePath::binary64);
      const auto ziv = realise_positions(R, few, TablePath::ziv);
      for (int pass = 0; pass < 2; ++pass) {
        const auto& got = pass == 0 ? fast : fast_few;
        const auto& want = pass == 0 ? mpfr : ziv;
        const auto& where = pass == 0 ? positions : few;
        for (std::size_t e = 0; e < got.size(); ++e)
          if (std::bit_cast<std::uint64_t>(got[e]) != std::bit_cast<std::uint64_t>(want[e])) {
            std::cout << "MISMATCH " << schedule << " " << F.name << " position "
                      << where[e / (2 * B)] << " block " << (e / 2) % B << (e % 2 ? " sin" : " cos")
                      << ": " << got[e] << " against " << (pass == 0 ? "MPFR " : "Ziv ") << want[e]
                      << "\n";
            return 1;
          }
      }
      std::cout << schedule << " " << F.name << ": " << fast.size() << " values agree with MPFR ("
                << fast_stats.binary64 << " of " << positions.size() * B
                << " entries decided in binary64)\n";
    }
  }
  return 0;
}

/// x as a 64-bit MPFR number rounded up (a rational upper bound).
void set_up(Mp& out, const mpq_class& x) { mpfr_set_q(out, x.get_mpq_t(), MPFR_RNDU); }

/// The candidate algorithm's evidence (proofs/range/fast_range.hpp), checked with this checker's
/// own per-query bounds (THEORY §6 "Per-query bounds"; the derivation is below and in
/// docs/TESTING.md). r1/r3 only: every realised rotation is cos and sin of the exact angle,
/// rounded once. Notation: u = 2^−p, η = 2^(emin−p) under nearest-even (2^(1−p), 2^(emin−p+1)
/// directed), so |rnd(x) − x| ≤ u|x| + η for every x up to max F; n = i − k − j the offset,
/// S(n) = Σ_d w_d cos(θ_d n), A_d = C·w_d, D = 2B coordinates.
///
/// 1. The table: ĉ_{n,d} = round_F(cos θ_d n), ŝ likewise (realised_table), so
///    |ĉ − cos| ≤ u + η and S(n) ≤ S⁺(n) = Σ_d w_d ĉ_{n,d} + (u + η)·Σ_d |w_d| (64-bit MPFR,
///    rounded up). The key k̂_j is (1, 0) rotated by R̂_j with THEORY §2.1's arithmetic: the
///    values (ĉ_j, ŝ_j) (checked), |k̂_{j,c}| ≤ 1.
/// 2. Global E (the certificate's own path, own_error_bound): an offset with
///    C·(S(0) − S⁺(n)) − 2E_v ≥ f_large is excluded at every query. The others, and every
///    listed candidate, are the candidates, sorted by S⁺ descending.
/// 3. Per query i: the realised query q̂_i (F's arithmetic, FastF) and its target
///    t_i = Ŝ_{i,i−k}, computed exactly. With q_{i,d} = A_d·(cos (i−k)θ_d, sin (i−k)θ_d) and
///    k_{j,d} = (cos jθ_d, sin jθ_d), q_i·k_j = C·S(n) and
///      Ŝ_{i,j} − C·S(n) = (Ŝ_{i,j} − q̂_i·k̂_j) + q̂_i·(k̂_j − k_j) + (q̂_i − q_i)·k_j.
///    (a) Rounding of the dot product, ρ_i. With a_c = |q̂_{i,c}|: each product
///        x_c = q̂_c·k̂_c has |x_c| ≤ a_c, and its rounding x̂_c too (a_c ∈ F, rounding
///        monotone), with |x̂_c − x_c| ≤ u·a_c + η. The partial sums s_1 = x̂_1,
///        s_m = rnd(s_{m−1} + x̂_m) have |s_m| ≤ B_m and |s_{m−1} + x̂_m| ≤ T_m, with
///        B_1 = a_1, T_m = B_{m−1} + a_m, B_m = (1 + u)·T_m + η (rounding is monotone). The
///        error of s_m grows by at most u·a_m + η (the product) and u·T_m + η (the sum), so
///        ρ_i = u·(P_D + Σ_{m=2..D} T_m) + (2D − 1)·η, P_D = Σ_c a_c (64-bit MPFR, upward).
///    (b) The key's rounding: |q̂·(k̂ − k)| ≤ Σ_c a_c·(u|k_c| + η) ≤ (u + η)·P_D.
///    (c) The query's error, per block (a priori, the same at every i): with the bias b
///        (b_c = rnd(β_c), β = A_d·(cos kθ, −sin kθ), |β_c| ≤ A_d) and |ĉ|, |c| ≤ 1,
///        |rnd(ĉ·b_0) − c·β_0| ≤ u|b_0| + η + (u + η)|b_0| + u·A_d + η; a component
///        rnd(rnd(ĉb_0) ∓ rnd(ŝb_1)) is within Δ = δ + u(A_d + δ) + η of A_d·cos or sin,
///        δ = (2u + η)(|b_0| + |b_1|) + 2u·A_d + 4η; and |(q̂ − q)·k| ≤ Q = Σ_d 2Δ_d.
///    err_i = ρ_i + (u + η)·P_D + Q bounds |Ŝ_{i,j} − C·S(n)| for every key j. A competitor at
///    offset n (both signs: S is even) cannot break the lead when C·S⁺(n) + err_i ≤
///    t_i − f_large, i.e. S⁺(n) ≤ σ_i = (t_i − f_large − err_i)/C (rounded down; S⁺ rounded up
///    to binary64). The candidates are visited from the largest S⁺ down until S⁺ ≤ σ_i; each
///    competitor there is scored exactly (FastF) and must trail t_i by f_large (exact test).
/// 4. The split bound (this checker's own, from 3(a) kept term by term). The error e_m of the
///    partial sum s_m against the exact X_m = Σ_{c≤m} x_c obeys e_1 ≤ u·a_1 + η and
///    e_m ≤ (1 + u)(e_{m−1} + u·a_m + η) + u·|X_m| + η (the rounded addend is within
///    e_{m−1} + u·a_m + η of X_m), so, unrolled,
///      |Ŝ_{i,j} − q̂_i·k̂_j| ≤ Σ_m gp_m·(u·a_m + η) + Σ_{m≥2} g_m·(u·|X_m| + η),
///    g_m = (1 + u)^(D−m), gp_m = (1 + u)^(D−m+1) (gp_1 = g_1). X_m is split around the ideal
///    vectors: per block q_{d,0}k_{d,0} = (A_d/2)(cos nθ_d + cos σθ_d) and q_{d,1}k_{d,1} =
///    (A_d/2)(cos nθ_d − cos σθ_d), σ = i − k + j, so the ideal partial sum is
///    J_m(n) = Σ_{d<m/2} A_d·cos nθ_d, plus (A_e/2)·(cos nθ_e + cos σθ_e) for odd m (e = ⌊m/2⌋,
///    the block half summed), and |X_m| ≤ |Ĵ_m(n)| + M + γ_m + β̄_m + dev_m: Ĵ_m the same sum
///    with the table's ĉ_{n,d} (and without the cos σθ term) in binary64, M = (D + 4)·2^−52·Σ|A_d|
///    its binary64 error (each term A_d·ĉ rounded twice, at most D/2 + 1 additions of values
///    ≤ Σ|A_d|), γ_m = (u + η)·(Σ_{d<m/2}|A_d| + [m odd]|A_e|/2) for ĉ against cos,
///    β̄_m = [m odd]·|A_e|/2 for the cos σθ term, dev_m = Σ_{c≤m} (Δ_{d(c)} + |A_{d(c)}|(u + η))
///    for x_c against q_c·k_c (|q̂_c − q_c| ≤ Δ_d of 3(c), |k̂_c − k_c| ≤ u + η, |k̂_c| ≤ 1).
///    With 3(b) and 3(c): |Ŝ_{i,j} − C·S(n)| ≤ R_i + A(n), where
///      R_i = Σ_m (u·gp_m + u + η)·a_m + K0,
///      K0 = Σ_m gp_m·η + Σ_{m≥2} g_m·(η + u·(dev_m + β̄_m + γ_m + M)) + Q,
///      A(n) = u·Σ_{m≥2} g_m·|Ĵ_m(n)|,
///    the g's and K0 from MPFR rounded up, the two binary64 sums of non-negative terms times
///    1 + 2^−40 plus 2^−1000 (γ_(D+1) and underflow), the rest in MPFR rounded up. A competitor
///    at offset n is excluded at query i when u2(n) = S⁺(n) + A(n)/C (rounded up) ≤
///    σ2_i = (t_i − f_large − R_i)/C (rounded down). The candidates are visited in decreasing
///    u2 until u2(n) ≤ σ2_i; a visited one is scored unless 3's test excludes it. On llama3-8b
///    in bf16 (C = 16384, 10^5 queries) this leaves 1.3·10^6 competitor scores instead of
///    1.9·10^7 (ropesim, with its own split bound: 9.0·10^5). `--audit-bounds` compares R_i +
///    A(n) with the recursion e_m evaluated directly at 256 bits and with realised errors.
/// The block scores needed are counted before any is computed and refused (exit 2) beyond
/// kMaxHorizonFastScores (FastF fast) or kMaxHorizonScores (MPFR). Needs F inside binary64.
void check_candidates(const json& c, Rotations& R, Head& head, const Format& F, const FValue& C,
                      const FValue& f_large, std::uint64_t k, std::uint64_t n_max) {
  if (c.at("realization") != "r1" && c.at("realization") != "r3")
    throw Invalid("candidates: the evidence needs r1 or r3 (the angle's error grows under r2)");
  if (F.p > 53 || F.emin < -1022 || F.emax > 1023)
    throw Unreadable("candidates: " + F.name + " is not inside binary64: not covered");
  const std::size_t B = R.blocks(), D = 2 * B;
  const mpq_class E = own_error_bound(c, F, C, B);  // also refuses a possible overflow
  const bool at_limit = c.at("at_limit").get<bool>();
  const std::uint64_t last_query = at_limit ? n_max + 1 : n_max + 2;
  if (last_query > (std::uint64_t{1} << 32)) throw Unreadable("candidates: n_max too large");
  // competitors sit at offsets i − k − j in −(k−1)..(last query − k), and S is even
  const std::uint64_t max_offset = std::max(last_query - k, k - 1);
  if (max_offset > (std::uint64_t{1} << 32)) throw Unreadable("candidates: k too large");
  std::vector<mpq_class> weights;
  mpq_class S0 = 0, W = 0;
  for (std::size_t d = 0; d < B; ++d) {
    mpq_class w(c.at("weights").at(d).get<std::string>());
    w.canonicalize();
    weights.push_back(w);
    S0 += w;
    W += abs(w);
  }
  const bool nearest = F.rnd == MPFR_RNDN;
  auto pow2 = [](long e) {
    mpq_class q = 1;
    if (e >= 0)
      mpq_mul_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<unsigned long>(e));
    else
      mpq_div_2exp(q.get_mpq_t(), q.get_mpq_t(), static_cast<unsigned long>(-e));
    return q;
  };
  const mpq_class u = pow2(nearest ? -F.p : 1 - F.p);
  const mpq_class eta = pow2(nearest ? F.emin - F.p : F.emin - F.p + 1);
  mpq_class Cq;
  mpfr_get_q(Cq.get_mpq_t(), C);

  auto T0 = std::chrono::steady_clock::now();
  std::clock_t cpu0 = std::clock();
  auto lap = [&](const char* what) {  // wall and CPU time of each phase (all threads)
    if (std::getenv("ROPESIM_VERIFY_STATS")) {
      auto t1 = std::chrono::steady_clock::now();
      const std::clock_t cpu1 = std::clock();
      std::fprintf(stderr, "%s %.2f s wall, %.2f s CPU\n", what,
                   std::chrono::duration<double>(t1 - T0).count(),
                   static_cast<double>(cpu1 - cpu0) / CLOCKS_PER_SEC);
      T0 = t1;
      cpu0 = cpu1;
    }
  };
  TableStats table_stats;
  const std::vector<double> table =
      realised_table(R, std::max(last_query, max_offset), &table_stats);
  if (std::getenv("ROPESIM_VERIFY_STATS"))
    std::fprintf(stderr, "table entries decided: %llu binary64, %llu MPFR 64-bit, %llu Ziv\n",
                 static_cast<unsigned long long>(table_stats.binary64),
                 static_cast<unsigned long long>(table_stats.mpfr64),
                 static_cast<unsigned long long>(table_stats.ziv));
  lap("table");
  auto rot = [&](std::uint64_t n) { return &table[static_cast<std::size_t>(n) * D]; };
  const FastF ar(F);
  // the keys: (1, 0) rotated by R̂_j (THEORY §2.1) has the values (ĉ_j, ŝ_j)
  for (std::uint64_t j = 0; j <= last_query; ++j)
    for (std::size_t d = 0; d < B; ++d) {
      const double cj = rot(j)[2 * d], sj = rot(j)[2 * d + 1];
      const double k0 = ar.add(ar.mul(cj, 1.0), ar.mul(sj, 0.0), true);
      const double k1 = ar.add(ar.mul(sj, 1.0), ar.mul(cj, 0.0));
      if (k0 != cj || k1 != sj) throw std::logic_error("candidates: a key is not (c, s)");
    }
  auto key = [&](std::uint64_t j) { return rot(j); };
  std::vector<double> bias;
  for (const FValue& b : head.bias()) bias.push_back(mpfr_get_d(b, MPFR_RNDN));  // exact
  auto query = [&](std::uint64_t i, std::vector<double>& q) {
    const double* cs = rot(i);
    for (std::size_t d = 0; d < B; ++d) {
      const double ci = cs[2 * d], si = cs[2 * d + 1], b0 = bias[2 * d], b1 = bias[2 * d + 1];
      q[2 * d] = ar.add(ar.mul(ci, b0), ar.mul(si, b1), true);
      q[2 * d + 1] = ar.add(ar.mul(si, b0), ar.mul(ci, b1));
    }
  };

  // 3(c): Q = Σ_d 2Δ_d, exact, then rounded up
  mpq_class Qq = 0;
  std::vector<mpq_class> Delta(B);  // Δ_d: |q̂_c − q_c| ≤ Δ_d for both coordinates of block d
  for (std::size_t d = 0; d < B; ++d) {
    const mpq_class A = abs(Cq * weights[d]);
    mpq_class b0, b1;
    mpfr_get_q(b0.get_mpq_t(), head.bias()[2 * d]);
    mpfr_get_q(b1.get_mpq_t(), head.bias()[2 * d + 1]);
    const mpq_class delta = (2 * u + eta) * (abs(b0) + abs(b1)) + 2 * u * A + 4 * eta;
    Delta[d] = delta + u * (A + delta) + eta;
    Qq += 2 * Delta[d];
  }
  constexpr mpfr_prec_t wb = 64;
  Mp Qm(wb), um(wb), etam(wb), ue(wb), Cm(wb), fl(wb);
  set_up(Qm, Qq);
  set_up(um, u);
  set_up(etam, eta);
  set_up(ue, mpq_class(u + eta));
  mpfr_set(Cm, C, MPFR_RNDN);        // exact: p ≤ 53 ≤ 64
  mpfr_set(fl, f_large, MPFR_RNDN);  // exact

  // 1 and 2: S⁺(n) from the table, the global exclusion, the candidates sorted by S⁺
  std::vector<double> Splus(max_offset + 1, 0.0);
  {
    std::vector<Interval> wi;
    for (std::size_t d = 0; d < B; ++d) {
      wi.emplace_back(wb);
      set_q(wi.back(), weights[d]);
    }
    Mp extra(wb), sum(wb), term(wb), x(wb);
    set_up(extra, mpq_class((u + eta) * W));
    for (std::uint64_t n = 1; n <= max_offset; ++n) {
      mpfr_set(sum, extra, MPFR_RNDU);
      const double* cs = rot(n);
      for (std::size_t d = 0; d < B; ++d) {
        mpfr_set_d(x, cs[2 * d], MPFR_RNDN);  // exact
        mpfr_mul(term, x, mpfr_sgn(x.get()) >= 0 ? wi[d].hi : wi[d].lo, MPFR_RNDU);
        mpfr_add(sum, sum, term, MPFR_RNDU);
      }
      Splus[n] = mpfr_get_d(sum, MPFR_RNDU);
    }
  }
  Mp lhs_fixed(wb);  // C·S(0) − 2E_v, rounded down
  {
    Mp twoE(wb);
    mpq_class cs0 = Cq * S0;
    mpfr_set_q(lhs_fixed, cs0.get_mpq_t(), MPFR_RNDD);
    set_up(twoE, mpq_class(2 * E));
    mpfr_sub(lhs_fixed, lhs_fixed, twoE, MPFR_RNDD);
  }
  lap("keys, Q, S+");
  std::vector<bool> candidate(max_offset + 1, false);
  for (const auto& n : c.at("candidate_offsets")) {
    if (!n.is_number_unsigned())
      throw Unreadable("candidate_offsets: expected non-negative integers");
    const std::uint64_t v = n.get<std::uint64_t>();
    if (v >= 1 && v <= max_offset) candidate[v] = true;
  }
  std::vector<std::uint64_t> offsets;
  {
    Mp lhs(wb), cs(wb), sp(wb);
    for (std::uint64_t n = 1; n <= max_offset; ++n) {
      if (!candidate[n]) {
        mpfr_set_d(sp, Splus[n], MPFR_RNDN);  // exact
        mpfr_mul(cs, Cm, sp, MPFR_RNDU);
        mpfr_sub(lhs, lhs_fixed, cs, MPFR_RNDD);
        candidate[n] = mpfr_less_p(lhs, fl) != 0;
      }
      if (candidate[n]) offsets.push_back(n);
    }
  }

  // 4: the split bound. g[m] ≥ (1 + u)^(D−m), gp[m] ≥ (1 + u)^(D−m+1) (m ≥ 2; gp[1] ≥
  // (1 + u)^(D−1)), rounded up to binary64; W_A = Σ_d |A_d|; M the binary64 error of Ĵ_m
  std::vector<double> g(D + 1, 0.0), gp(D + 1, 0.0);
  Mp one_plus_u(wb);
  mpfr_add_ui(one_plus_u, um, 1, MPFR_RNDU);
  {
    Mp pw(wb);
    mpfr_set_ui(pw, 1, MPFR_RNDU);
    for (std::size_t m = D; m >= 1; --m) {  // pw = (1 + u)^(D−m)
      g[m] = mpfr_get_d(pw, MPFR_RNDU);
      if (m == 1) break;
      mpfr_mul(pw, pw, one_plus_u, MPFR_RNDU);
      gp[m] = mpfr_get_d(pw, MPFR_RNDU);
    }
    gp[1] = g[1];
  }
  std::vector<double> Ahat(B);  // RN(A_d) in binary64
  mpq_class WA = 0;
  for (std::size_t d = 0; d < B; ++d) {
    const mpq_class A = Cq * weights[d];
    Mp x(53);
    mpfr_set_q(x, A.get_mpq_t(), MPFR_RNDN);
    Ahat[d] = mpfr_get_d(x, MPFR_RNDN);
    WA += abs(A);
  }
  const mpq_class Mq = mpq_class(static_cast<long>(D) + 4) * pow2(-52) * WA;
  // K0 = Σ_m gp_m·η + Σ_{m≥2} g_m·(η + u·(dev_m + β̄_m + γ_m + M)) + Q (MPFR, upward); and
  // the per-query weights wq_m = u·gp_m + (u + η) of a_m = |q̂_{i,m}|
  Mp K0(wb);
  std::vector<double> wq(D + 1, 0.0);
  {
    Mp term(wb), gm(wb), x(wb);
    set_up(K0, Qq);
    mpq_class dev = 0, prefix = 0;  // Σ_{c≤m}(Δ_d + |A_d|(u + η)); Σ_{d<m/2} |A_d|
    for (std::size_t m = 1; m <= D; ++m) {
      const std::size_t d = (m - 1) / 2;  // the block of coordinate m (1-based)
      const mpq_class A = abs(Cq * weights[d]);
      dev += Delta[d] + A * (u + eta);
      if (m % 2 == 0) prefix += A;
      const mpq_class half = m % 2 == 1 ? A / 2 : mpq_class(0);  // β̄_m, block m/2 half done
      const mpq_class gamma = (u + eta) * (prefix + half);
      mpfr_set_d(gm, gp[m], MPFR_RNDN);  // exact
      mpfr_mul(term, gm, etam, MPFR_RNDU);
      mpfr_add(K0, K0, term, MPFR_RNDU);
      mpfr_mul(term, gm, um, MPFR_RNDU);
      mpfr_add(term, term, ue, MPFR_RNDU);
      wq[m] = mpfr_get_d(term, MPFR_RNDU);
      if (m >= 2) {
        set_up(x, mpq_class(eta + u * (dev + half + gamma + Mq)));
        mpfr_set_d(gm, g[m], MPFR_RNDN);  // exact
        mpfr_mul(term, gm, x, MPFR_RNDU);
        mpfr_add(K0, K0, term, MPFR_RNDU);
      }
    }
  }
  // u2(n) ≥ S⁺(n) + A(n)/C, A(n) = u·Σ_{m≥2} g_m·|Ĵ_m(n)|, Ĵ_m from the table in binary64
  Mp sum_margin(wb), tiny(wb), x2(wb), y2(wb);
  mpfr_set_d(sum_margin, 1 + 0x1p-40, MPFR_RNDU);  // ≥ 1 + γ_(D+1) for D < 2^30
  mpfr_set_d(tiny, 0x1p-1000, MPFR_RNDU);          // the underflow of D products, and more
  std::vector<double> Splus2(max_offset + 1, HUGE_VAL), A_of(g_audit_bounds ? max_offset + 1 : 0);
  for (std::uint64_t n : offsets) {
    const double* cs = rot(n);
    double sum = 0, acc = 0;
    for (std::size_t m = 1; m <= D; ++m) {
      const std::size_t d = (m - 1) / 2;
      double J = 0;
      if (m % 2 == 1) {
        J = acc + (0.5 * Ahat[d]) * cs[2 * d];
      } else {
        acc += Ahat[d] * cs[2 * d];
        J = acc;
      }
      if (m >= 2) sum += g[m] * std::fabs(J);
    }
    mpfr_set_d(x2, sum, MPFR_RNDN);  // exact
    mpfr_mul(x2, x2, sum_margin, MPFR_RNDU);
    mpfr_add(x2, x2, tiny, MPFR_RNDU);
    mpfr_mul(x2, x2, um, MPFR_RNDU);  // ≥ A(n)
    if (g_audit_bounds) A_of[n] = mpfr_get_d(x2, MPFR_RNDU);
    mpfr_div(x2, x2, Cm, MPFR_RNDU);
    mpfr_set_d(y2, Splus[n], MPFR_RNDN);  // exact
    mpfr_add(x2, x2, y2, MPFR_RNDU);
    Splus2[n] = mpfr_get_d(x2, MPFR_RNDU);
  }
  // visited in the order of u2 (the split bound's); each carries S⁺ for the global-E bound
  std::stable_sort(offsets.begin(), offsets.end(),
                   [&](std::uint64_t a, std::uint64_t b) { return Splus2[a] > Splus2[b]; });

  // 3: per query, the target and the threshold σ_i; the work counted before any competitor
  const std::uint64_t first = k + 1, queries = n_max + 1 >= first ? n_max + 2 - first : 0;
  std::vector<double> sigma(static_cast<std::size_t>(queries)), targets(sigma.size()),
      sigma2(sigma.size()), R_of(g_audit_bounds ? sigma.size() : 0);
  std::vector<double> q(D);
  double scores = 0;
  {
    Mp P(wb), Bm(wb), Tsum(wb), a(wb), t(wb), rho(wb), err(wb), s(wb), one_u(wb), eta_sum(wb);
    mpfr_add_ui(one_u, um, 1, MPFR_RNDU);
    mpfr_mul_ui(eta_sum, etam, static_cast<unsigned long>(2 * D - 1), MPFR_RNDU);
    for (std::uint64_t i = first; i <= n_max + 1; ++i) {
      query(i, q);
      const double target = ar.dot(q.data(), key(i - k), D);
      if (!std::isfinite(target))
        throw Invalid("query i = " + std::to_string(i) + ": the target score is not finite");
      // the recursion of 3(a): B_1 = a_1; T_m = B_{m−1} + a_m, B_m = (1 + u)·T_m + η;
      // ρ = u·(P_D + Σ_{m≥2} T_m) + (2D − 1)·η;  err = ρ + (u + η)·P_D + Q
      mpfr_set_d(P, std::fabs(q[0]), MPFR_RNDN);  // exact
      mpfr_set(Bm, P, MPFR_RNDN);
      mpfr_set_zero(Tsum, 1);
      for (std::size_t cc = 1; cc < D; ++cc) {
        mpfr_set_d(a, std::fabs(q[cc]), MPFR_RNDN);  // exact
        mpfr_add(P, P, a, MPFR_RNDU);
        mpfr_add(t, Bm, a, MPFR_RNDU);  // T_m
        mpfr_add(Tsum, Tsum, t, MPFR_RNDU);
        mpfr_mul(Bm, t, one_u, MPFR_RNDU);
        mpfr_add(Bm, Bm, etam, MPFR_RNDU);
      }
      mpfr_add(rho, P, Tsum, MPFR_RNDU);
      mpfr_mul(rho, rho, um, MPFR_RNDU);
      mpfr_add(rho, rho, eta_sum, MPFR_RNDU);
      mpfr_mul(t, ue, P, MPFR_RNDU);
      mpfr_add(err, rho, t, MPFR_RNDU);
      mpfr_add(err, err, Qm, MPFR_RNDU);
      // σ_i = (t_i − f_large − err_i)/C, rounded down
      mpfr_set_d(s, target, MPFR_RNDN);  // exact
      mpfr_sub(s, s, fl, MPFR_RNDD);
      mpfr_sub(s, s, err, MPFR_RNDD);
      mpfr_div(s, s, Cm, MPFR_RNDD);
      const double sg = mpfr_get_d(s, MPFR_RNDD);
      // 4: R_i ≥ Σ_m wq_m·a_m + K0 (the binary64 sum of non-negative terms times 1 + 2^−40,
      // plus 2^−1000 for underflow); σ2_i = (t_i − f_large − R_i)/C, rounded down
      double weighted = 0;
      for (std::size_t cc = 0; cc < D; ++cc) weighted += wq[cc + 1] * std::fabs(q[cc]);
      mpfr_set_d(err, weighted, MPFR_RNDN);  // exact
      mpfr_mul(err, err, sum_margin, MPFR_RNDU);
      mpfr_add(err, err, tiny, MPFR_RNDU);
      mpfr_add(err, err, K0, MPFR_RNDU);
      if (g_audit_bounds) R_of[static_cast<std::size_t>(i - first)] = mpfr_get_d(err, MPFR_RNDU);
      mpfr_set_d(s, target, MPFR_RNDN);  // exact
      mpfr_sub(s, s, fl, MPFR_RNDD);
      mpfr_sub(s, s, err, MPFR_RNDD);
      mpfr_div(s, s, Cm, MPFR_RNDD);
      const double sg2 = mpfr_get_d(s, MPFR_RNDD);
      const std::size_t at = static_cast<std::size_t>(i - first);
      sigma[at] = sg;
      sigma2[at] = sg2;
      targets[at] = target;
      for (std::uint64_t n : offsets) {
        if (Splus2[n] <= sg2) break;   // this and every later offset: the split bound
        if (Splus[n] <= sg) continue;  // the per-query bound err_i
        scores += static_cast<double>(n <= i - k) + static_cast<double>(n < k);
      }
    }
  }
  lap("pass 1");
  if (g_audit_bounds) {
    // `--audit-bounds`: R_i + A(n) against (1) the recursion of 4 evaluated directly at 256
    // bits (upward), e_1 = u·a_1 + η, e_m = (1 + u)(e_{m−1} + u·a_m + η) + u·X̄_m + η,
    // X̄_m = |J_m(n)| + γ_m + dev_m + β̄_m with J_m summed exactly from the table, plus
    // (u + η)·P_D + Q: a second implementation of the same bound, which the binary64 one must
    // meet and exceed by at most 2^−30 relative; (2) the realised error |Ŝ_{i,j} − C·S(n)| of
    // every key j, S(n) from cos at 160 bits: the bound must hold, and the largest ratio is
    // printed. Queries: the first 24 and the last 2 certified.
    constexpr mpfr_prec_t wa = 256;
    Mp e(wa), xbar(wa), J(wa), t1(wa), t2(wa), upe(wa), ua(wa), etaa(wa), uea(wa), Qa(wa), lhs(wa);
    set_up(ua, u);
    set_up(etaa, eta);
    set_up(uea, mpq_class(u + eta));
    set_up(Qa, Qq);
    mpfr_add_ui(upe, ua, 1, MPFR_RNDU);
    std::vector<mpq_class> devs(D + 1), halves(D + 1), gammas(D + 1);
    {
      mpq_class dev = 0, prefix = 0;
      for (std::size_t m = 1; m <= D; ++m) {
        const std::size_t d = (m - 1) / 2;
        const mpq_class A = abs(Cq * weights[d]);
        dev += Delta[d] + A * (u + eta);
        if (m % 2 == 0) prefix += A;
        devs[m] = dev;
        halves[m] = m % 2 == 1 ? A / 2 : mpq_class(0);
        gammas[m] = (u + eta) * (prefix + halves[m]);
      }
    }
    std::map<std::uint64_t, double> S_exact;  // C·S(n) at 160 bits, by |n|
    std::vector<Interval> theta;
    for (std::size_t d = 0; d < B; ++d) {
      theta.emplace_back(224);
      if (!R.block(d).turn && !enclose(*R.block(d).theta, theta.back()))
        throw std::logic_error("audit: cannot enclose a block");
    }
    auto CS = [&](std::uint64_t n) {
      if (auto it = S_exact.find(n); it != S_exact.end()) return it->second;
      Mp x(160), cs(160), sum(160), w(160);
      mpfr_set_zero(sum, 1);
      for (std::size_t d = 0; d < B; ++d) {
        if (R.block(d).turn) {
          mpfr_const_pi(x, MPFR_RNDN);
          mpq_class t = *R.block(d).turn * mpq_class(to_mpz(n));
          t -= mpz_class(t.get_num() / t.get_den());
          mpfr_mul_q(x, x, t.get_mpq_t(), MPFR_RNDN);
          mpfr_mul_2ui(x, x, 1, MPFR_RNDN);
        } else {
          mpfr_mul_ui(x, theta[d].lo, static_cast<unsigned long>(n), MPFR_RNDN);
        }
        mpfr_cos(cs, x, MPFR_RNDN);
        mpfr_set_q(w, weights[d].get_mpq_t(), MPFR_RNDN);
        mpfr_mul(cs, cs, w, MPFR_RNDN);
        mpfr_add(sum, sum, cs, MPFR_RNDN);
      }
      mpfr_mul(sum, sum, Cm, MPFR_RNDN);
      return S_exact[n] = mpfr_get_d(sum, MPFR_RNDN);
    };
    double worst_ratio = 0, worst_excess = 0;
    long pairs = 0;
    std::vector<double> qa(D);
    for (std::uint64_t i = first; i <= n_max + 1; ++i) {
      if (i >= first + 24 && i + 2 <= n_max + 1) continue;
      query(i, qa);
      const std::size_t at = static_cast<std::size_t>(i - first);
      for (std::uint64_t j = 0; j < i; ++j) {
        const std::uint64_t n = i - k >= j ? i - k - j : j - (i - k);
        if (n == 0 || n > max_offset || !(Splus2[n] < HUGE_VAL)) continue;  // the target
        // (1) the recursion
        const double* cs = rot(n);
        mpfr_set_zero(e, 1);
        mpfr_set_zero(J, 1);
        Mp Jfull(wa), PD(wa);
        mpfr_set_zero(Jfull, 1);
        mpfr_set_zero(PD, 1);
        for (std::size_t m = 1; m <= D; ++m) {
          const std::size_t d = (m - 1) / 2;
          mpfr_set_d(t1, std::fabs(qa[m - 1]), MPFR_RNDN);  // a_m, exact
          mpfr_add(PD, PD, t1, MPFR_RNDU);
          mpfr_mul(t1, t1, ua, MPFR_RNDU);
          mpfr_add(t1, t1, etaa, MPFR_RNDU);  // u·a_m + η
          mpfr_set_q(t2, mpq_class(Cq * weights[d]).get_mpq_t(), MPFR_RNDN);
          mpfr_mul_d(t2, t2, cs[2 * d], MPFR_RNDN);  // A_d·ĉ_{n,d} (256 bits: exact enough)
          if (m % 2 == 1) {
            mpfr_div_2ui(t2, t2, 1, MPFR_RNDN);
            mpfr_add(J, Jfull, t2, MPFR_RNDN);
          } else {
            mpfr_add(Jfull, Jfull, t2, MPFR_RNDN);
            mpfr_set(J, Jfull, MPFR_RNDN);
          }
          if (m == 1) {
            mpfr_set(e, t1, MPFR_RNDU);
            continue;
          }
          mpfr_add(e, e, t1, MPFR_RNDU);
          mpfr_mul(e, e, upe, MPFR_RNDU);
          mpfr_abs(xbar, J, MPFR_RNDU);
          set_up(t2, mpq_class(gammas[m] + devs[m] + halves[m]));
          mpfr_add(xbar, xbar, t2, MPFR_RNDU);
          mpfr_mul(xbar, xbar, ua, MPFR_RNDU);
          mpfr_add(e, e, xbar, MPFR_RNDU);
          mpfr_add(e, e, etaa, MPFR_RNDU);
        }
        mpfr_mul(t1, uea, PD, MPFR_RNDU);
        mpfr_add(e, e, t1, MPFR_RNDU);
        mpfr_add(e, e, Qa, MPFR_RNDU);
        mpfr_set_d(lhs, R_of[at], MPFR_RNDN);
        mpfr_add_d(lhs, lhs, A_of[n], MPFR_RNDU);  // the binary64 path's R_i + A(n)
        mpfr_div(t1, lhs, e, MPFR_RNDN);
        const double rel = mpfr_get_d(t1, MPFR_RNDN) - 1;
        if (rel < -0x1p-100 || rel > 0x1p-30)
          throw std::logic_error(
              "audit: R_i + A(n) differs from the recursion at i = " + std::to_string(i) +
              ", j = " + std::to_string(j) + " by " + std::to_string(rel) + " relative");
        worst_excess = std::max(worst_excess, rel);
        // (2) the realised error
        const double sc = ar.dot(qa.data(), key(j), D);
        const double dev = std::fabs(sc - CS(n));
        worst_ratio = std::max(worst_ratio, dev / (R_of[at] + A_of[n]));
        if (dev > R_of[at] + A_of[n])
          throw std::logic_error("audit: |S^ - C*S(n)| above R_i + A(n) at i = " +
                                 std::to_string(i) + ", j = " + std::to_string(j));
        ++pairs;
      }
    }
    std::printf(
        "audit: %ld pairs; R_i + A(n) within %.2g of the recursion; largest "
        "|S^ - C*S(n)|/(R_i + A(n)) = %.3f\n",
        pairs, worst_excess, worst_ratio);
  }
  if (std::getenv("ROPESIM_VERIFY_STATS"))
    std::fprintf(stderr, "candidates %zu, competitor scores %.0f\n", offsets.size(), scores);
  const double budget = ar.fast() ? kMaxHorizonFastScores : kMaxHorizonScores;
  if (scores * static_cast<double>(B) > budget) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "candidates: the per-query bounds leave %.3g competitor scores x %zu blocks = "
                  "%.3g block scores; accepted: at most %.0e: not checked",
                  scores, B, scores * static_cast<double>(B), budget);
    throw Unreadable(line);
  }
  const double f = mpfr_get_d(f_large, MPFR_RNDN);  // exact
  // t − s ≥ f exactly: the binary64 difference decides unless it equals f (rounding is
  // monotone); then the sign of TwoSum's remainder does
  auto leads = [&](double t, double s) {
    const double d = t - s;
    if (!std::isfinite(t) || !std::isfinite(s)) return false;
    if (!std::isfinite(d)) {
      FValue x(F.p), y(F.p);
      mpfr_set_d(x, t, MPFR_RNDN);
      mpfr_set_d(y, s, MPFR_RNDN);
      return leads_by(x, y, f_large, F);
    }
    if (d != f) return d > f;
    const double v = d - t;
    const double e = (t - (d - v)) + (-s - v);
    return e >= 0;
  };
  // the queries split over up to 4 threads, each in increasing order; the reported failure is
  // the smallest failing query (and its first failing competitor in visiting order), as on one
  // thread: a thread stops once it passes a failure another has found
  const unsigned hw = std::thread::hardware_concurrency();
  const std::size_t threads = std::max<std::size_t>(1, std::min(hw, 4u));
  std::atomic<std::uint64_t> failed{std::numeric_limits<std::uint64_t>::max()};
  std::vector<std::string> messages(threads);
  std::vector<std::uint64_t> failed_at(threads, std::numeric_limits<std::uint64_t>::max());
  auto work = [&](std::size_t th) {
    std::vector<std::uint64_t> js;
    std::vector<double> qv(D);
    for (std::uint64_t i = first + th; i <= n_max + 1; i += threads) {
      if (i > failed.load()) return;
      const std::size_t at = static_cast<std::size_t>(i - first);
      const double sg = sigma[at], sg2 = sigma2[at], target = targets[at];
      js.clear();
      for (std::uint64_t n : offsets) {
        if (Splus2[n] <= sg2) break;
        if (Splus[n] <= sg) continue;
        if (n <= i - k) js.push_back(i - k - n);  // offset +n
        if (n < k) js.push_back(i - k + n);       // offset −n (j < i)
      }
      if (js.empty()) continue;
      query(i, qv);
      for (std::size_t g = 0; g < js.size(); g += 4) {
        double sc[4];
        const double* ks[4];
        for (std::size_t t = 0; t < 4; ++t) ks[t] = key(js[std::min(g + t, js.size() - 1)]);
        ar.dot4(qv.data(), ks, D, sc);
        for (std::size_t t = 0; t < 4 && g + t < js.size(); ++t) {
          if (leads(target, sc[t])) continue;
          FValue x(F.p), y(F.p);
          mpfr_set_d(x, target, MPFR_RNDN);
          mpfr_set_d(y, sc[t], MPFR_RNDN);
          messages[th] = "query i = " + std::to_string(i) + ": target " + text(x) +
                         " does not lead candidate j = " + std::to_string(js[g + t]) + " (" +
                         text(y) + ") by f_large";
          failed_at[th] = i;
          std::uint64_t seen = failed.load();
          while (i < seen && !failed.compare_exchange_weak(seen, i)) {
          }
          return;
        }
      }
    }
  };
  {
    std::vector<std::thread> pool;
    for (std::size_t th = 1; th < threads; ++th) pool.emplace_back(work, th);
    work(0);
    for (auto& t : pool) t.join();
  }
  const auto worst = std::min_element(failed_at.begin(), failed_at.end());
  if (*worst != std::numeric_limits<std::uint64_t>::max())
    throw Invalid(messages[static_cast<std::size_t>(worst - failed_at.begin())]);
  lap("pass 2");
}

void check_horizon(const json& c) {
  const Format F = read_format(c.at("format"), c.at("rounding").get<std::string>());
  if (c.at("summation").get<std::string>() != "sequential")
    throw Unreadable("summation " + c.at("summation").get<std::string>() +
                     " is not covered (covered: sequential)");
  only_keys(c, {"certificate", "version",  "evidence",  "schedule",    "realization",
                "format",      "rounding", "summation", "blocks",      "weights",
                "k",           "C",        "f_large",   "n_max",       "at_limit",
                "max_length",  "queries",  "fail",      "error_bound", "candidate_offsets"},
            "horizon certificate");
  if (!c.at("fail").is_null())
    only_keys(c.at("fail"), {"query", "competitor", "target", "competitor_score", "gap"}, "fail");
  Rotations R(checked_schedule(c), c.at("realization").get<std::string>(), F);
  // the head is the schedule's multi-frequency head with equal weights (what `horizon` and
  // `compile` write): the weights are part of the subject the label names
  const json& weights = c.at("weights");
  if (!weights.is_array() || weights.size() != R.blocks())
    throw Invalid("weights: one per block expected");
  for (std::size_t d = 0; d < R.blocks(); ++d) {
    const std::string w = weights[d].is_string() ? weights[d].get<std::string>() : "";
    const bool equal = w == "1/" + std::to_string(R.blocks()) || (R.blocks() == 1 && w == "1");
    if (!equal)
      throw Invalid("weights: block " + std::to_string(d) + " has weight " + weights[d].dump() +
                    "; the head of schedule " + c.at("schedule").get<std::string>() +
                    " has equal weights 1/" + std::to_string(R.blocks()));
  }
  const std::uint64_t k = u64(c, "k"), n_max = u64(c, "n_max");
  if (k < 1) throw Invalid("k: must be at least 1");
  const FValue C = read_value(c.at("C"), F, "C");
  if (!mpfr_number_p(C) || mpfr_sgn(C.get()) <= 0) throw Invalid("C: must be finite and > 0");
  const FValue f_large = read_value(c.at("f_large"), F, "f_large");
  check_f_large(f_large, F);

  const bool at_limit = c.at("at_limit").get<bool>();
  Head head(c, R, C, k);
  const std::string evidence =
      c.contains("evidence") ? c.at("evidence").get<std::string>() : std::string("scan");
  if (evidence == "candidates") {
    check_candidates(c, R, head, F, C, f_large, k, n_max);
  } else if (evidence == "scan") {
    check_scan(c, R, head, F, f_large, k, n_max, at_limit);
  } else {
    throw Unreadable("evidence '" + evidence + "' is not covered (covered: scan, candidates)");
  }
  if (at_limit) {
    if (n_max != u64(c, "max_length")) throw Invalid("n_max: at the limit it is max_length");
    return;
  }
  const json& fail = c.at("fail");
  if (fail.is_null()) throw Invalid("fail: missing (the claim N_max = n_max needs it)");
  const std::uint64_t i = u64(fail, "query"), j = u64(fail, "competitor");
  const std::string item = "failing query i = " + std::to_string(i);
  if (i != n_max + 2 || i < k + 1) throw Invalid(item + ": must be n_max + 2 >= k + 1");
  if (j >= i || j == i - k) throw Invalid(item + ": competitor j = " + std::to_string(j));
  const auto qi = head.vector(i, false);
  const FValue target = score(qi, head.vector(i - k, true), F),
               comp = score(qi, head.vector(j, true), F);
  if (!same_value(target, read_value(fail.at("target"), F, item)) &&
      !(mpfr_nan_p(target) && fail.at("target").get<std::string>() == "nan"))
    throw Invalid(item + ": target score is " + text(target));
  if (!same_value(comp, read_value(fail.at("competitor_score"), F, item)) &&
      !(mpfr_nan_p(comp) && fail.at("competitor_score").get<std::string>() == "nan"))
    throw Invalid(item + ": competitor score is " + text(comp));
  if (leads_by(target, comp, f_large, F))
    throw Invalid(item + ": the target leads j = " + std::to_string(j) + " by f_large: no failure");
  if (!fail.at("gap").is_null()) {
    Mp d(F.sum_bits());
    mpfr_sub(d, target, comp, MPFR_RNDN);
    mpq_class gap;
    mpfr_get_q(gap.get_mpq_t(), d);
    if (gap != read_decimal(fail.at("gap").get<std::string>(), item + " gap"))
      throw Invalid(item + ": the gap is " + gap.get_str() + ", not " +
                    fail.at("gap").get<std::string>());
  }
}

// ---------------------------------------------------------------------------------------------
// The compile certificate

constexpr double kMaxPastAdditions = 2e8;

/// The P head's re-binarisation FFN (THEORY §7 C1 Patch 2) on h, with x = (top = 1, h, out = 0):
/// hidden units ReLU(rnd(h − f1)), ReLU(rnd(h − f2)) (the products −f1·1, 1·h are exact), output
/// rnd(rnd(s·u1) + rnd(−s·u2)), s = 1/(f2 − f1) exact in F.
FValue rebinarise(const FValue& h, const FValue& f1, const FValue& f2, const FValue& s,
                  const Format& F) {
  FValue zero(F.p);
  mpfr_set_zero(zero, 1);
  auto relu = [&](FValue v) { return mpfr_sgn(v.get()) > 0 ? v : zero; };
  const FValue u1 = relu(f_add(h, f1, F, true)), u2 = relu(f_add(h, f2, F, true));
  FValue minus_s(s);
  mpfr_neg(minus_s, minus_s, MPFR_RNDN);
  return f_add(f_mul(s, u1, F), f_mul(minus_s, u2, F), F);
}

/// The P head's certified count (proofs::certify_past_head): Z_c = sequential sum of c ones,
/// α_c = rnd(1/Z_c), h(c) = sequential sum of c copies of α_c; every h(c), c ≤ count, must
/// re-binarise to exactly 1 (and 0 to 0). nullopt = every count (Z and h stopped changing).
std::optional<std::uint64_t> past_count(const json& p, const Format& F) {
  const FValue f1 = read_value(p.at("f1"), F, "past f1"), f2 = read_value(p.at("f2"), F, "past f2");
  if (!(mpfr_sgn(f1.get()) > 0 && mpfr_less_p(f1, f2))) throw Invalid("past: need 0 < f1 < f2");
  mpq_class q1, q2;
  mpfr_get_q(q1.get_mpq_t(), f1);
  mpfr_get_q(q2.get_mpq_t(), f2);
  const mpq_class scale = 1 / (q2 - q1);
  const FValue s = round_rational(scale, F, "past scale");
  mpq_class sq;
  mpfr_get_q(sq.get_mpq_t(), s);
  if (sq != scale) throw Invalid("past: the scale 1/(f2 - f1) is not exact in " + F.name);
  const std::uint64_t limit = u64(p, "limit");
  FValue zero(F.p), one(F.p);
  mpfr_set_zero(zero, 1);
  mpfr_set_ui(one, 1, MPFR_RNDN);
  if (!mpfr_zero_p(rebinarise(zero, f1, f2, s, F))) return std::uint64_t{0};
  FValue Z(zero), h(zero), alpha(zero);
  bool z_stagnant = false;
  double additions = 0;
  for (std::uint64_t c = 1; c <= limit; ++c) {
    const FValue z_next = f_add(Z, one, F);
    if (!z_stagnant && c > 1 && same_bits(z_next, Z)) z_stagnant = true;
    FValue h_next(zero);
    if (z_stagnant) {
      h_next = f_add(h, alpha, F);
    } else {
      mpq_class z;
      mpfr_get_q(z.get_mpq_t(), z_next);
      alpha = round_rational(mpq_class(1 / z), F, "1/Z_" + std::to_string(c));
      additions += static_cast<double>(c);
      if (additions > kMaxPastAdditions)
        throw Unreadable("past: more than 2e8 additions to check the count: not checked");
      for (std::uint64_t k = 0; k < c; ++k) h_next = f_add(h_next, alpha, F);
    }
    Z = z_next;
    const bool h_stagnant = z_stagnant && same_bits(h_next, h);
    h = h_next;
    const FValue out = rebinarise(h, f1, f2, s, F);
    if (!mpfr_number_p(out) || mpfr_cmp_ui(out, 1) != 0) return c - 1;
    if (h_stagnant) return std::nullopt;
  }
  return limit;
}

/// One MOD_m^r head (THEORY §7 C4): table T(s) = r3 of the turn 1/m; query bias
/// (round(cos 2πr/m), round(−sin 2πr/m)) rotated by T(s) at query residue s, (1, 0) unrotated;
/// BOS key (Ĉ, 0) rotated by T(0) on the rotary pair and 0 on the unrotated pair; non-BOS keys
/// 0 on the rotary pair and (w, 0) on the unrotated pair, w = rnd(Ĉ·b̂), b̂ = round(b_m),
/// b_m = (1 + cos 2π/m)/2. Scores summed sequentially over the 4 coordinates.
void check_mod_head(const json& h, const Format& F, const FValue& f_large) {
  const std::uint64_t m = u64(h, "m"), r = u64(h, "r");
  const std::string item = "MOD_" + std::to_string(m) + "^" + std::to_string(r) + " head";
  if (m < 2 || r >= m || m > 100000) throw Invalid(item + ": need 2 <= m <= 1e5 and r < m");
  const FValue C = read_value(h.at("C"), F, item + " C");
  if (!mpfr_number_p(C) || mpfr_sgn(C.get()) <= 0) throw Invalid(item + ": C must be > 0");
  Angle unit;
  unit.turn = mpq_class(1, static_cast<unsigned long>(m));
  // b_m = (1 + cos 2π/m)/2: exactly 0, 1/4, 1/2, 3/4 for m = 2, 3, 4, 6 (Niven), else
  // irrational (never a rounding boundary) and rounded by Ziv
  const auto exact_cos = exact_turn_trig(*unit.turn).first;
  const FValue b_hat = exact_cos ? round_rational(mpq_class((1 + *exact_cos) / 2), F, item + " b")
                                 : ziv(
                                       [&](Interval& out) {
                                         const mpfr_prec_t w = mpfr_get_prec(out.lo);
                                         Interval x(w), two_pi(w), t(w);
                                         set_q(t, mpq_class(2, static_cast<unsigned long>(m)));
                                         mpfr_const_pi(two_pi.lo, MPFR_RNDD);
                                         mpfr_const_pi(two_pi.hi, MPFR_RNDU);
                                         interval_mul(x, t, two_pi);
                                         Mp width(w);
                                         mpfr_sub(width, x.hi, x.lo, MPFR_RNDU);
                                         mpfr_cos(out.lo, x.lo, MPFR_RNDD);
                                         mpfr_cos(out.hi, x.lo, MPFR_RNDU);
                                         mpfr_sub(out.lo, out.lo, width, MPFR_RNDD);
                                         mpfr_add(out.hi, out.hi, width, MPFR_RNDU);
                                         mpfr_add_ui(out.lo, out.lo, 1, MPFR_RNDD);
                                         mpfr_add_ui(out.hi, out.hi, 1, MPFR_RNDU);
                                         mpfr_div_2ui(out.lo, out.lo, 1, MPFR_RNDD);
                                         mpfr_div_2ui(out.hi, out.hi, 1, MPFR_RNDU);
                                         return true;
                                       },
                                       F, item + " b");
  if (!same_value(b_hat, read_value(h.at("b"), F, item + " b")))
    throw Invalid(item + ": b^ = round(b_m) is " + text(b_hat));
  const FValue w = f_mul(C, b_hat, F);
  if (!same_value(w, read_value(h.at("key_weight"), F, item + " key_weight")))
    throw Invalid(item + ": key weight round(C*b^) is " + text(w));
  Angle query;
  query.turn = mpq_class(static_cast<unsigned long>(r), static_cast<unsigned long>(m));
  const FValue qc = scaled_trig(query, 1, false, F, item),
               qs = scaled_trig(query, -1, true, F, item);
  const auto& bias = h.at("query_bias");
  if (!same_value(qc, read_value(bias.at(0), F, item)) ||
      !same_value(qs, read_value(bias.at(1), F, item)))
    throw Invalid(item + ": query bias is (" + text(qc) + ", " + text(qs) + ")");
  std::vector<Block> blocks(1);
  blocks[0].turn = *unit.turn;
  Rotations T(blocks, "r3", F);
  FValue zero(F.p), one(F.p);
  mpfr_set_zero(zero, 1);
  mpfr_set_ui(one, 1, MPFR_RNDN);
  auto rotate = [&](const std::pair<FValue, FValue>& cs, const FValue& x0, const FValue& x1) {
    return std::vector<FValue>{f_add(f_mul(cs.first, x0, F), f_mul(cs.second, x1, F), F, true),
                               f_add(f_mul(cs.second, x0, F), f_mul(cs.first, x1, F), F)};
  };
  auto k_bos = rotate(T.at(0, 0), C, zero);
  k_bos.push_back(zero);
  k_bos.push_back(zero);
  const std::vector<FValue> k_other = {zero, zero, w, zero};
  const auto& margins = h.at("margins");
  if (margins.size() != m) throw Invalid(item + ": one margin per residue expected");
  for (std::uint64_t s = 0; s < m; ++s) {
    const std::string rs = item + " residue " + std::to_string(s);
    auto q = rotate(T.at(0, s), qc, qs);  // the query at position m + s
    q.push_back(one);
    q.push_back(zero);
    const FValue bos = score(q, k_bos, F), other = score(q, k_other, F);
    const json& claim = margins[s];
    if (u64(claim, "residue") != s) throw Invalid(rs + ": listed out of order");
    if (!same_value(bos, read_value(claim.at("bos_score"), F, rs)))
      throw Invalid(rs + ": the BOS score is " + text(bos));
    if (!same_value(other, read_value(claim.at("other_score"), F, rs)))
      throw Invalid(rs + ": the non-BOS score is " + text(other));
    const bool bos_wins = s == r;
    if (!leads_by(bos_wins ? bos : other, bos_wins ? other : bos, f_large, F))
      throw Invalid(rs + ": the " + std::string(bos_wins ? "BOS" : "non-BOS") +
                    " key does not lead by f_large");
    Mp d(F.sum_bits());
    mpfr_sub(d, bos_wins ? bos : other, bos_wins ? other : bos, MPFR_RNDN);
    mpq_class margin;
    mpfr_get_q(margin.get_mpq_t(), d);
    if (claim.at("margin").is_null() ||
        margin != read_decimal(claim.at("margin").get<std::string>(), rs + " margin"))
      throw Invalid(rs + ": the margin is " + margin.get_str());
  }
}

void check_compile(const json& c) {
  const Format F = read_format(c.at("format"), c.at("rounding").get<std::string>());
  if (c.at("summation").get<std::string>() != "sequential")
    throw Unreadable("summation " + c.at("summation").get<std::string>() +
                     " is not covered (covered: sequential)");
  const FValue f_large = read_value(c.at("f_large"), F, "f_large");
  check_f_large(f_large, F);
  std::optional<std::uint64_t> length;  // nullopt = every length
  bool bounded = false;
  if (!c.at("past").is_null()) {
    const std::optional<std::uint64_t> count = past_count(c.at("past"), F);
    const json& claim = c.at("past").at("certified_count");
    if (count ? (claim.is_null() || claim.get<std::uint64_t>() != *count) : !claim.is_null())
      throw Invalid("P head: the certified count is " +
                    (count ? std::to_string(*count) : std::string("every count")));
    if (count && *count == 0) throw Invalid("P head: no count is certified");
    length = count;
  }
  for (const auto& h : c.at("mod_heads")) check_mod_head(h, F, f_large);
  for (const auto& b : c.at("bounded_heads")) {
    const json& hz = b.at("horizon");
    const std::string item = "Y^" + std::to_string(u64(b, "k")) + " head " + b.at("node").dump();
    if (hz.at("format") != c.at("format") || hz.at("rounding") != c.at("rounding") ||
        u64(hz, "k") != u64(b, "k") || !hz.at("at_limit").get<bool>() ||
        !same_value(read_value(hz.at("f_large"), F, item), f_large))
      throw Invalid(item + ": its horizon certificate is not for this model's head");
    try {
      check_horizon(hz);
    } catch (const Invalid& e) {
      throw Invalid(item + ": " + e.what());
    }
    const std::uint64_t n = u64(hz, "n_max");
    if (!bounded || !length || n < *length) length = n;
    bounded = true;
  }
  const json& claim = c.at("certified_length");
  if (length ? (claim.is_null() || claim.get<std::uint64_t>() != *length) : !claim.is_null())
    throw Invalid("certified_length: the certified parts give " +
                  (length ? std::to_string(*length) : std::string("every length")));
}

// The compile certificate against its model (MODEL.json): verify/compile_check.inc.
#include "compile_check.inc"  // NOLINT(bugprone-suspicious-include)
}  // namespace

int main(int argc, char** argv) {
  // the arithmetic self-test of verify/fast_f.hpp (tests/cli/test_verify.cpp runs it)
  if (argc == 3 && std::string(argv[1]) == "--self-test-arithmetic") {
    try {
      const long n = std::stol(argv[2]);
      if (n >= 1 && n <= 100000000) return self_test_arithmetic(n);
    } catch (const std::exception&) {
    }
    std::cerr << "ropesim-verify: --self-test-arithmetic N: N from 1 to 1e8\n";
    return 2;
  }
  // the binary64 cos/sin of the horizon table (verify/fast_trig.hpp) against MPFR
  if (argc == 3 && std::string(argv[1]) == "--self-test-trig") {
    try {
      const long n = std::stol(argv[2]);
      if (n >= 1 && n <= 100000000) return self_test_trig(n);
    } catch (const std::exception&) {
    }
    std::cerr << "ropesim-verify: --self-test-trig N: N from 1 to 1e8\n";
    return 2;
  }
  if (argc == 3 && std::string(argv[1]) == "--audit-bounds") {  // tests/cli/test_verify.cpp
    g_audit_bounds = true;
    --argc;
    ++argv;
  }
  if (argc < 2 || argc > 3 || std::string(argv[1]) == "--help" || std::string(argv[1]) == "-h") {
    std::cerr
        << "usage: ropesim-verify FILE.json [MODEL.json]   (a certificate of ropesim rotations, "
           "horizon or compile --certificate; a compile certificate with the model it names)\n";
    return 2;
  }
  try {
    const json c = parse_strict(read_certificate_file(argv[1]));
    if (!c.is_object() || !c.contains("certificate") || !c.contains("version"))
      throw Unreadable("not a ropesim certificate (no 'certificate' and 'version' keys)");
    const std::string kind = c.at("certificate").get<std::string>();
    if (argc == 3 && kind != "compile")
      throw Unreadable("MODEL.json is read with a compile certificate only; this is a " + kind +
                       " certificate");
    // census certificates state the census from version 2 on (verify/census_check.hpp)
    const int version = kind == "census" ? 2 : 1;
    if (c.at("version") != version)
      throw Unreadable("a " + kind + " certificate has version " + std::to_string(version) +
                       " (rewrite it with this ropesim)");
    try {
      if (kind == "census")
        check_census(c);
      else if (kind == "horizon")
        check_horizon(c);
      else if (kind == "compile" && argc == 3)
        check_compile_model(c, argv[2]);
      else if (kind == "compile")
        throw Unreadable(
            "a compile certificate is checked against its model: ropesim-verify CERT.json "
            "MODEL.json");
      else
        throw Unreadable("certificate kind '" + kind +
                         "' is not covered (covered: census, horizon, compile)");
    } catch (const json::exception& e) {
      throw Unreadable(std::string("malformed certificate: ") + e.what());
    }
    std::cout << "VALID\n";
    return 0;
  } catch (const Invalid& e) {
    std::cout << "INVALID: " << e.what() << "\n";
    return 1;
  } catch (const Unreadable& e) {
    std::cerr << "ropesim-verify: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "ropesim-verify: " << e.what() << "\n";
    return 2;
  }
}
