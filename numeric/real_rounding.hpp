#pragma once
/// The one place where ropesim rounds an exact real into a format F (THEORY §1, §3, §6;
/// NUMERIC §2): rationals, reals given by a proven enclosure (numeric::ExactReal), cos and sin
/// of an exact angle (a value of some format, or θ·i for an exact θ and an integer i, θ = 2π/m
/// included), K·x for a rational K (scaled trig: the query biases of THEORY §6–§7), and a real
/// known only through exact comparisons with rationals (the MOD atom's b_m and scale bound,
/// THEORY §7 C4). attention's realisations and census, attention::ExactBlockRotation and the
/// proofs' constructions all call it; nothing else in ropesim rounds these reals.
///
/// What is rounded: the exact real, once, under F's rounding direction (Ziv's strategy: the
/// result is correct whatever the working precision; only the time depends on it).
///
/// The fast path and its error bound (cos/sin): when every target is "double-double decidable"
/// (RealRounding::fast_double_double: binary64 itself, or a floating format inside binary64
/// with p ≤ 40 under round-to-nearest-even, subnormals on and overflow to ±inf), cos and sin are
/// evaluated in double-double arithmetic (numeric/trig/double_double.hpp) within
/// kDoubleDoubleTrigError = 2^-88 (the proven 2^-95 with 7 bits of margin) plus the angle's
/// own error (θ's double-double error times i, plus 2^-100·|θi| for the product), and the
/// interval [y − e, y + e] is rounded into every target; it is accepted when both ends round
/// to the same element (rounding is monotone, so
/// every real in between — the exact value among them — rounds there too).
///
/// The fallback (Ziv, NUMERIC §2): otherwise, and for every target outside the fast domain,
/// MPFR's correctly rounded sin_cos of an approximation a of the angle at w bits,
/// |a − angle| ≤ E_a, encloses cos and sin in [c − E, c + E], E = E_a + ulp_w(c) (cos, sin are
/// 1-Lipschitz), decided by the same interval test at w = p_max + 24, doubling up to 65536 bits.
/// An exactly zero angle gives cos = 1, sin = 0 exactly.
///
/// Flags: the IEEE overflow flag ("overflow after rounding", numeric/flags.hpp) is raised when
/// the exact real overflows F; it is decided only for results at ±max finite or ±inf (the only
/// ones that can carry it). No other flag is reported here (cos, sin of a finite angle are
/// never invalid; inexact and underflow are not tracked by the callers).
#include <gmpxx.h>
#include <mpfr.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "numeric/arithmetic.hpp"
#include "numeric/binary64_rounding.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact_real.hpp"
#include "numeric/flags.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/trig/double_double.hpp"
#include "numeric/value.hpp"

namespace ropesim::numeric {

/// Rounding of exact reals into one format F under one rounding direction, with one engine for
/// the exact fallbacks (the engine only changes the speed, never the bits). Not copyable (holds
/// MPFR numbers); const methods are thread-safe.
class RealRounding {
 public:
  /// Binds F, the rounding direction and the engine (which must outlive this object).
  RealRounding(const Format& format, Rounding rounding, const Engine& engine = default_engine());
  ~RealRounding();
  RealRounding(const RealRounding&) = delete;
  RealRounding& operator=(const RealRounding&) = delete;

  const Format& format() const { return arithmetic_.format(); }
  Rounding rounding() const { return arithmetic_.rounding(); }
  const Engine& engine() const { return arithmetic_.engine(); }
  const Arithmetic& arithmetic() const { return arithmetic_; }
  /// The binary64 fast path's rounding into F (numeric/binary64_rounding.hpp; NUMERIC §2),
  /// bound to the same F and rounding direction.
  const Binary64Rounding& binary64() const { return binary64_; }
  /// F's precision p in bits (hidden bit included).
  int precision() const { return format().precision; }

  /// round_F(q); raises Flag::overflow when q overflows F (IEEE overflow after rounding).
  Value rational(const mpq_class& q, Flags& flags) const;
  /// round_F(x) of an exact real (rationals exactly, irrationals by Ziv's strategy on x's
  /// enclosure); raises Flag::overflow as rational(). Throws std::runtime_error if the
  /// rounding is undecided at 65536 bits (not possible for the reals ExactReal builds).
  Value real(const ExactReal& x, Flags& flags) const;

  /// If every real in [lo, hi] (finite, lo ≤ hi) rounds to the same element of F, that
  /// element (raising Flag::overflow when those reals overflow F); nullopt when they do not,
  /// or when the ends disagree on overflow (refine and ask again).
  std::optional<Value> interval(mpfr_srcptr lo, mpfr_srcptr hi, Flags& flags) const;
  /// interval() for [y − e, y + e], y a double-double, e ≥ 0 (|y.hi| ≥ 2^-900, finite;
  /// otherwise nullopt). Precondition: fast_double_double().
  std::optional<Value> double_double(const DoubleDouble& y, double e, Flags& flags) const;
  /// True when double_double() applies: F's conversion of doubles is the fast one
  /// (Binary64Rounding::fast_rounding) and F is binary64 or p ≤ 40 (so that the 2^-50
  /// relative widening in double_double stays far below F's half-ulp).
  bool fast_double_double() const {
    return binary64_.fast_rounding() && (binary64_.is_binary64() || precision() <= 40);
  }

 private:
  bool at_max(const Value& v) const;  // |v| == max finite
  std::optional<bool> overflow_on(const Value& out, mpfr_srcptr lo, mpfr_srcptr hi) const;

  Arithmetic arithmetic_;
  Binary64Rounding binary64_;
  double max_finite_d_ = 0;
  mpfr_t max_mp_;  // |max finite| exactly
};

/// An exact angle θ (radians) enclosed at some precision: |θ − mid| ≤ err, with a double-double
/// copy for the fast path (|θ − dd| ≤ dd_error). Refined on demand by ensure(); not thread-safe.
class AngleEnclosure {
 public:
  /// Encloses θ at 192 bits. Throws what ExactReal::enclose throws (nothing for the angles of
  /// ropesim's schedules).
  explicit AngleEnclosure(ExactReal theta);
  ~AngleEnclosure();
  AngleEnclosure(const AngleEnclosure&) = delete;
  AngleEnclosure& operator=(const AngleEnclosure&) = delete;
  /// Makes the enclosure at least `prec` bits wide.
  void ensure(mpfr_prec_t prec);
  mpfr_prec_t precision() const { return prec_; }
  mpfr_srcptr mid() const { return mid_; }
  mpfr_srcptr err() const { return err_; }
  /// θ ≈ dd.hi + dd.lo with |θ − dd| ≤ dd_error() (a double, rounded up).
  const DoubleDouble& dd() const { return dd_; }
  double dd_error() const { return dd_error_; }
  const ExactReal& theta() const { return theta_; }

 private:
  ExactReal theta_;
  mpfr_prec_t prec_ = 0;
  mpfr_t mid_, err_;
  DoubleDouble dd_;
  double dd_error_ = 0;
};

/// cos and sin of one angle rounded into one target, with the flags raised (overflow only).
struct RoundedCosSin {
  Value cos;
  Value sin;
  Flags flags;
};

/// Correctly rounded cos and sin of exact angles into several targets at once (the fast path
/// and Ziv fallback of the file comment). Holds MPFR scratch numbers: one per thread.
class CosSinRounder {
 public:
  /// `targets` must outlive the rounder; `allow_fast` = false forces the MPFR path for every
  /// evaluation (the tests compare both bit for bit).
  explicit CosSinRounder(std::vector<const RealRounding*> targets, bool allow_fast = true);
  ~CosSinRounder();
  CosSinRounder(const CosSinRounder&) = delete;
  CosSinRounder& operator=(const CosSinRounder&) = delete;

  const std::vector<const RealRounding*>& targets() const { return targets_; }
  /// True when the double-double first step is tried (allow_fast and every target
  /// fast_double_double()).
  bool uses_fast_path() const { return fast_; }

  /// cos and sin of the exact finite non-zero angle `a` (a value of any format), into every
  /// target: out[k] for targets()[k] (cos, sin set; flags raised into out[k].flags).
  /// Throws std::runtime_error if undecided at 65536 bits (never observed).
  void of_value(const Value& a, RoundedCosSin* out);
  /// cos and sin of θ·i, θ enclosed by `theta`, i ≥ 1. `want_cos` / `want_sin` select the
  /// components computed (the other is left untouched in out). Throws as of_value.
  void of_product(AngleEnclosure& theta, std::uint64_t i, RoundedCosSin* out, bool want_cos = true,
                  bool want_sin = true);

  /// How many evaluations fell back to MPFR since construction (fast path undecided or off).
  std::uint64_t fallbacks() const { return fallbacks_; }

 private:
  template <class AngleAt>
  void run(AngleAt&& angle_at, RoundedCosSin* out, bool want_cos, bool want_sin);
  /// The double-double first step; true when every wanted component of every target was
  /// decided (out written), false to fall back to MPFR (out untouched).
  bool fast(const DoubleDouble& x, double angle_error, RoundedCosSin* out, bool want_cos,
            bool want_sin);

  std::vector<const RealRounding*> targets_;
  int max_precision_ = 0;
  bool fast_ = false;
  std::uint64_t fallbacks_ = 0;
  std::vector<RoundedCosSin> fast_out_;
  mpfr_t a_, ea_, c_, s_, e_, lo_, hi_, t_;
};

/// round_F(K·x) for a rational K and a real x that is either known to be the rational
/// `exact`, or irrational and given by `enclose_x` (sets [lo, hi], equal precisions P, to a
/// proven enclosure of x of width a few 2^-P; called at P + 16 bits for an answer at P).
/// K = 0 gives round_F(0). Used for K·cos(nθ), K·sin(nθ) (the Y^k head's and the MOD atom's
/// query biases, THEORY §6–§7, "each rounded once from the exact real"; RoPE-X App D).
/// Throws std::runtime_error (naming `what`) if Ziv's loop fails (the enclosure does not
/// shrink, or x is rational but was not given as `exact`).
Value round_scaled(const Arithmetic& F, const mpq_class& K, const std::optional<mpq_class>& exact,
                   const Enclosure& enclose_x, const std::string& what);

/// round_F(x) for a real x > 0 known through exact comparisons: `sign_minus(t)` = sign(x − t)
/// for every rational t, and `approximation` a double near x (any finite value; only the walk's
/// length depends on it). Walks from round_F(approximation) to the two neighbours lo ≤ x < hi
/// of F by exact comparisons, then applies the rounding direction (the midpoint compared
/// exactly for the nearest modes; a tie — only for rational x — goes through from_rational).
/// Returns nullopt when x > max finite of F (the caller decides what overflow means there).
/// Used by the MOD atom (THEORY §7 C4) for b_m = (1 + cos 2π/m)/2 and the scale bound.
std::optional<Value> round_by_comparison(const Format& F, Rounding r, double approximation,
                                         const std::function<int(const mpq_class&)>& sign_minus,
                                         const Engine& engine = default_engine());

}  // namespace ropesim::numeric
