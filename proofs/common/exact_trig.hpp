#pragma once
/// Exact cos and sin of the angles n·θ_d of rotary blocks (THEORY §3, §6): values that are
/// rational (Niven's theorem: only 0, ±1/2, ±1 for rational multiples of 2π), proven
/// enclosures otherwise, exact sign decisions, and correct rounding of K·cos(n·θ) into a
/// format (the query bias of the Y^k head, THEORY §6: "each rounded once from the exact real").
#include <gmpxx.h>
#include <mpfr.h>

#include <cstdint>
#include <optional>
#include <span>

#include "attention/schedules/schedule.hpp"
#include "numeric/engine.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::proofs {

/// The angles n·θ of one rotary block, with exact trigonometry.
///
/// θ is the block's exact angle per position (radians). When θ = 2π·a/m (the block carries a
/// RationalTurn, or θ is a rational multiple of π), cos(nθ) and sin(nθ) are recognised as
/// rational exactly when Niven's theorem allows (turn fractions 0, 1/12, 1/6, 1/4, …);
/// otherwise (e.g. θ rational and nθ ≠ 0) cos(nθ) and sin(nθ) are irrational (Lindemann), so
/// refining an enclosure always separates them from any rational threshold.
class BlockAngle {
 public:
  /// From a schedule block (θ and, when present, its rational turn a/m).
  explicit BlockAngle(const attention::RotaryBlock& block);

  /// cos(n·θ) when it is rational, else std::nullopt.
  std::optional<mpq_class> exact_cos(std::int64_t n) const;
  /// sin(n·θ) when it is rational, else std::nullopt.
  std::optional<mpq_class> exact_sin(std::int64_t n) const;

  /// Sets [lo, hi] (equal precisions P) to a proven enclosure of cos(n·θ) (resp. sin) of
  /// width a few units of 2^-P (lo = hi when the value is rational and representable).
  void enclose_cos(std::int64_t n, mpfr_ptr lo, mpfr_ptr hi) const;
  void enclose_sin(std::int64_t n, mpfr_ptr lo, mpfr_ptr hi) const;

  /// θ as a double (display and fast pre-filters only; never for decisions).
  double theta_double() const { return theta_double_; }
  /// The exact angle θ.
  const numeric::ExactReal& theta() const { return theta_; }
  /// The turn a/m when θ = 2π·a/m.
  const std::optional<mpq_class>& turn() const { return turn_; }

 private:
  void enclose(std::int64_t n, bool sine, mpfr_ptr lo, mpfr_ptr hi) const;
  numeric::ExactReal theta_;
  std::optional<mpq_class> turn_;  // θ / 2π when rational
  double theta_double_ = 0;
};

/// A weighted sum of cosines S(n) = Σ_d w_d·cos(n·θ_d) (THEORY §6: the multi-frequency head's
/// ideal score divided by C; one block with w = 1 is cos(n·g)).
struct CosineSum {
  std::vector<BlockAngle> blocks;
  std::vector<mpq_class> weights;  ///< w_d, one per block

  /// Σ_d w_d = S(0).
  mpq_class weight_sum() const;
  /// Sets [lo, hi] (equal precisions) to an enclosure of S(n).
  void enclose(std::int64_t n, mpfr_ptr lo, mpfr_ptr hi) const;
  /// S(n) exactly when every term is rational.
  std::optional<mpq_class> exact(std::int64_t n) const;
  /// Sign of S(n) − t, decided exactly (enclosures refined up to `max_precision` bits).
  /// Returns 0 when S(n) = t exactly, or when undecided at max_precision (only possible
  /// for sums of several irrational algebraic terms that cancel, e.g. cos 2π/5 + cos 4π/5);
  /// `undecided`, when given, is set in that second case.
  int compare(std::int64_t n, const mpq_class& t, mpfr_prec_t max_precision = 4096,
              bool* undecided = nullptr) const;
  /// S(n) in double (display and pre-filters), with a proven bound on its error.
  /// `weight_doubles`, when not empty, are weights[d].get_d() computed once by the caller (a
  /// scan over many n: the mpq conversions cost more than the cosines); the result is the same.
  double approximate(std::int64_t n, double* error_bound = nullptr,
                     std::span<const double> weight_doubles = {}) const;
  /// weights[d].get_d() for every d, for approximate().
  std::vector<double> weight_doubles() const;
};

/// round_F(K·cos(n·θ)) (sine = false) or round_F(K·sin(n·θ)) (sine = true), K rational,
/// correctly rounded from the exact real by numeric::round_scaled (numeric/real_rounding.hpp:
/// Niven's rational values exactly, the others by Ziv's strategy on BlockAngle's enclosure). Used
/// for the Y^k head's query bias (THEORY §6, RoPE-X App D). Throws std::runtime_error only if Ziv's
/// loop fails (it does not for the irrational values BlockAngle produces).
numeric::Value round_scaled_trig(const numeric::Format& f, numeric::Rounding r,
                                 const BlockAngle& angle, std::int64_t n, bool sine,
                                 const mpq_class& K,
                                 const numeric::Engine& engine = numeric::default_engine());

/// The exact rational value of a finite element of a format (numeric::exact_rational).
using numeric::exact_rational;

}  // namespace ropesim::proofs
