#pragma once
/// The fast exact engine and engine selection (NUMERIC §2).
///
/// `fast_engine()` returns, for every format, rounding direction and input, the same element of
/// F as `mpfr_engine()` (bit for bit; tests/numeric/test_fast_engine.cpp checks it
/// exhaustively on fp8 pairs and fp16/bf16 unary inputs, on random fp32 operands and on
/// RapidCheck-generated formats). It is fast on the formats where binary64 can do the work:
/// floating formats with p ≤ 25 and -400 ≤ emin ≤ emax ≤ 400 (fp32, tf32, fp16, bf16, fp8,
/// their subnormals=off / overflow=saturate variants, custom formats in that range). Outside
/// that domain, for operands that are not small doubles, for fixed point, wide values and the
/// conversions from integers, rationals, MPFR numbers and oracles, it calls `mpfr_engine()`.
#include <cstdint>
#include <span>
#include <string_view>

#include "numeric/engine.hpp"

namespace ropesim::numeric {

/// The elementwise operations of round_elementwise.
enum class ElementwiseOperation { add, sub, mul, div };

/// out[i] = round_F(a[i] ∘ b[i]) in direction r for arrays of values held in doubles (elements
/// of F, ±0, ±inf or NaN; F any format that fits in a double): the same bits as calling
/// fast_engine() (or mpfr_engine()) element by element, without the per-element Engine call
/// and Value. This is the array form the benchmarks compare with a native double loop.
/// For fast formats (see the file comment) the arrays are processed in blocks of 256 by a
/// branch-free kernel (round-to-nearest-even: innocuous double rounding then a magic-constant
/// re-rounding; nearest-away and directed modes: a round-to-odd binary64 value then bit masks;
/// NUMERIC §2, argued in fast_engine_arrays.cpp); a block holding any element outside the kernel's
/// domain (operands not in F or subnormal, results below F's normal range — except under
/// nearest-even with subnormals — or beyond max finite, ±inf, NaN) is recomputed element by
/// element by the scalar path. `out` may be the same array as `a` or `b`. Throws InvalidArgument
/// when the spans differ in length, out overlaps a or b otherwise, or F does not fit in a double.
void round_elementwise(const Format& f, ElementwiseOperation op, std::span<const double> a,
                       std::span<const double> b, std::span<double> out, Rounding r);

/// The transcendental functions of round_elementwise_unary.
enum class UnaryFunction { exp, log, cos, sin };

/// out[i] = round_F(fn(x[i])) in direction r for an array of values held in doubles (F any
/// format that fits in a double; x[i] any double, ±0, ±inf, NaN): the same bits as calling
/// fast_engine().exp/log/cos/sin (or mpfr_engine()'s) element by element, without the
/// per-element Engine call, Value and atomic counter update (the counters of
/// fast_engine_counters() are updated once per call with the same totals). exp, log, cos, sin
/// in binary64 with a rounding test against F's boundaries, MPFR when it cannot decide (Ziv;
/// NUMERIC §2, argued in fast_engine_scalar.hpp). `out` may be the same array as `x`. Throws
/// InvalidArgument when the spans differ in length, out overlaps x otherwise, or F does not
/// fit in a double.
void round_elementwise_unary(const Format& f, UnaryFunction fn, std::span<const double> x,
                             std::span<double> out, Rounding r);

/// The fast exact engine (see the file comment). Thread-safe; stateless apart from the
/// fallback counters.
const Engine& fast_engine();

/// How often the fast engine's exp/log/cos/sin rounding test could not decide the result and
/// the MPFR engine was called instead (Ziv's second step), summed over all threads since the
/// program started (relaxed atomic counters: exact totals, no ordering with other memory).
/// `evaluations` counts the calls that took the binary64 path (the denominator).
/// `kernel_blocks` and `scalar_blocks` count round_elementwise's blocks of (up to) 256
/// elements computed by the branch-free kernel and those recomputed by the scalar path.
struct FastEngineCounters {
  std::uint64_t evaluations = 0;
  std::uint64_t fallbacks = 0;
  std::uint64_t kernel_blocks = 0;
  std::uint64_t scalar_blocks = 0;
};

/// The current totals of the fast engine's transcendental fallbacks and array blocks (see
/// FastEngineCounters).
FastEngineCounters fast_engine_counters();

/// The engine called `name`: "mpfr" (the exact MPFR reference), "fast" (fast_engine()) or
/// "auto" (the recommended engine: today fast_engine()). Every engine gives the same results
/// bit for bit; only the speed differs. Throws ropesim::InvalidArgument naming `name` and the
/// accepted values for any other name.
const Engine& engine_by_name(std::string_view name);

/// The accepted engine names, for error messages and `--help`: "mpfr, fast, auto".
std::string_view engine_names();

}  // namespace ropesim::numeric
