#pragma once
/// Bounded-error trig (THEORY §3 "Every implementation within a bound";
/// NUMERIC §3 "Vendor error bounds of cos and sin"): a pipeline whose `cos_sin` step is not one
/// library but every binary32 implementation of cos and sin within a stated error, e.g.
/// `cos_sin=fp32:ulp-1`.
///
/// An *implementation* is a pair of functions cos~, sin~ : binary32 → binary32 (a function of
/// the argument: equal arguments give equal results) with, for every argument x inside the
/// model's domain,
///   ulp-U       cos~(x) is one of the 2U+1 binary32 values whose distance in ulp steps from
///               the correctly rounded RN(cos x) is at most U (the CUDA C++ Programming Guide's
///               definition of "maximum ulp error": "the absolute value of the difference in
///               ulps between the result returned ... and a correctly rounded single-precision
///               result"); likewise sin~. U = 0 is the correctly rounded step (`:cr`).
///   absolute    |cos~(x) − cos x| ≤ E_cos and |sin~(x) − sin x| ≤ E_sin (the vendors' fast
///               intrinsics document absolute errors on [−π, π]).
/// Outside the domain the vendors only say "larger otherwise": ropesim then allows every value
/// in [−1, 1] (an assumption in the vendor's favour: nothing bounds it at all) and marks the
/// entry *undocumented*.
///
/// Named models (TrigErrorModel::named), with their sources:
///   cuda        CUDA cosf/sinf: 2 ulp, full range (CUDA C++ Programming Guide, "Mathematical
///               Functions", Table 17 Single-Precision Mathematical Standard Library Functions;
///               "generated from extensive but not exhaustive tests, so they are not guaranteed
///               bounds")                                                       = ulp-2
///   cuda-fast   CUDA __cosf / __sinf (-use_fast_math): "For x in [−π, π], the maximum absolute
///               error is 2^-21.19 [__cosf] / 2^-21.41 [__sinf], and larger otherwise" (same
///               guide, Table 21 Single-Precision Floating-Point Intrinsic Functions)
///   metal       Metal precise cos/sin: ≤ 4 ulp (Metal Shading Language Specification §8.4,
///               Table 8.1)                                                     = ulp-4
///   metal-fast  Metal fast::cos / fast::sin (the default, -ffast-math): "For x in the domain
///               [−π, π], the maximum absolute error is ≤ 2^-13 and larger otherwise" (MSL
///               Specification §8.4, Table 8.2)
/// `ulp-U@R` restricts ulp-U to |x| ≤ R ("device trig accurate only below R").
///
/// After cos_sin the pipeline's later steps (the cos_sin storage cast, the attention factor
/// multiply, the table cast) are each a correctly rounded monotone map of the value (rounding
/// is monotone; multiplying by the positive factor is monotone), so the set of table values an
/// implementation can produce at one (position, block) lies in the box [map(lo), map(hi)]
/// whose ends are attained (lo and hi are themselves allowed binary32 results): TrigBox.
#include <gmpxx.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"

namespace ropesim::attention {

/// The error model of a bounded `cos_sin` step (see the file comment).
struct TrigErrorModel {
  enum class Kind {
    ulps,      ///< within `ulps` binary32 steps of the correctly rounded value
    absolute,  ///< |error| ≤ 2^-cos_exponent (cos), 2^-sin_exponent (sin)
  };
  Kind kind = Kind::ulps;
  std::uint32_t ulps = 0;
  /// Absolute models: the bound is 2^-exponent (exact rational exponent, e.g. 2119/100).
  mpq_class cos_exponent = 0, sin_exponent = 0;
  /// The documented domain |x| ≤ domain_limit (binary64; for [−π, π] the double nearest below
  /// π, which separates the binary32 values exactly as π does); +inf = every finite x.
  double domain_limit = std::numeric_limits<double>::infinity();
  /// The spelling that names it: "ulp-1", "ulp-2@100000", "cuda-fast", ...
  std::string name;
  /// Where the bound comes from (one line; empty for a user-given ulp-U).
  std::string source;

  /// Parses the text after `cos_sin=fp32:`: ulp-U | ulp:U | ulp<=U | ulp≤U (U an integer
  /// 0..1048576), optionally followed by @R (R a positive decimal), or cuda | cuda-fast | metal |
  /// metal-fast. Throws InvalidArgument naming the text and the accepted spellings.
  static TrigErrorModel parse(std::string_view text);
  /// One line of the accepted spellings.
  static std::string spellings();
};

/// A pipeline realisation whose cos_sin step is every implementation within `model`.
/// `base` is the same pipeline with cos_sin correctly rounded (`:cr`): it forms the argument
/// of cos and sin and carries every other step.
struct BoundedRealisation {
  Realisation base;
  TrigErrorModel model;
  /// The spec as given, e.g. "pipeline:cos_sin=fp32:ulp-1".
  std::string spec;
  /// "pipeline:...;cos_sin=fp32:ulp-1" (base.name() with the cos_sin suffix replaced).
  std::string name() const;
};

/// True when `spec` is a pipeline whose cos_sin step ends in a bounded-error suffix
/// (`:ulp…`, `:cuda`, `:cuda-fast`, `:metal`, `:metal-fast`). Throws nothing.
bool is_bounded_realisation_spec(std::string_view spec);

/// Parses a bounded pipeline spec (is_bounded_realisation_spec): the cos_sin step must compute
/// in fp32 (the models bound binary32 functions; a storage cast `fp32>bf16` is allowed) with
/// nearest-even rounding. Throws InvalidArgument (one line, naming the problem and the
/// accepted spellings) otherwise, or when the rest of the spec does not parse.
BoundedRealisation parse_bounded_realisation(std::string_view spec,
                                             const numeric::FormatBinding& binding);

/// Checks that `r` can realise `s`: check_applicable of the base, and a one-axis schedule
/// (multi-axis positions are not modelled here). Throws InvalidArgument.
void check_bounded_applicable(const Schedule& s, const BoundedRealisation& r);

/// What every implementation within the model can put in the table at one (position, block).
struct TrigBox {
  /// The binary32 argument of cos and sin (the pipeline's angle converted to fp32); unset for
  /// a block with no angle (θ = 0 or a dropped frequency: the table holds (1, 0), no trig).
  std::optional<float> argument;
  /// The correctly rounded (`:cr`) table values, and the box ends (table format values as
  /// doubles; every table format is at most binary32, so doubles hold them exactly; ±0 compare
  /// equal).
  double cos_cr = 0, sin_cr = 0;
  double cos_lo = 0, cos_hi = 0, sin_lo = 0, sin_hi = 0;
  /// The allowed binary32 results of cos~ and sin~ at the argument, before the later steps
  /// (allowed_results); equal to the table values' preimage ends. Unset argument: (1, 0).
  float raw_cos_lo = 1, raw_cos_hi = 1, raw_sin_lo = 0, raw_sin_hi = 0;
  /// False when |argument| is outside the model's documented domain (box [map(−1), map(1)]).
  bool documented = true;
  /// True when both boxes are single values: every implementation gives cos_lo, sin_lo.
  bool fixed() const { return cos_lo == cos_hi && sin_lo == sin_hi; }
};

/// The boxes of one block over positions [begin, end) (out[k] for position begin + k).
/// Cost: one pipeline evaluation and two MPFR cos/sin per position. Throws InvalidArgument
/// like check_bounded_applicable and for a block index out of range.
std::vector<TrigBox> trig_boxes(const Schedule& s, const BoundedRealisation& r, std::size_t block,
                                std::uint64_t begin, std::uint64_t end);

/// The allowed binary32 results [lo, hi] of cos (is_cos) or sin at the binary32 argument x
/// under `model`, before the later pipeline steps; `documented` receives false outside the
/// domain (then [−1, 1]). Sound: every allowed value lies in [lo, hi]. ulp models: exactly the
/// allowed values; absolute models: cos x and the bound are enclosed at 200 bits outward, so
/// [lo, hi] is the allowed set unless a binary32 value lies within 2^-190 of an end.
std::pair<float, float> allowed_results(const TrigErrorModel& model, float x, bool is_cos,
                                        bool* documented = nullptr);

}  // namespace ropesim::attention
