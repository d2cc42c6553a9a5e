// `ropesim diagnose`'s score kernels (proofs/reports/score_kernels.hpp) against their
// references bit for bit: the binary32 dots (Float32Dots) against numeric::dot() — every step
// through numeric::Arithmetic — on columns of bf16, fp16 and fp32 values whose products
// overflow binary32, fall into its subnormals and below, and cancel; the rotation of the draws
// (ScoreRotation) scalar against the MPFR engine's steps, and its lane kernel (baseline and
// AVX2) against the scalar one on random, overflowing, subnormal, ±0, inf and NaN inputs.
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "numeric/arithmetic.hpp"
#include "numeric/engine.hpp"
#include "numeric/summation.hpp"
#include "proofs/reports/score_kernels.hpp"

using ropesim::numeric::Arithmetic;
using ropesim::numeric::EvaluationPolicy;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Summation;
using ropesim::numeric::Value;
using ropesim::proofs::Float32Dots;

TEST_CASE("Float32Dots equals dot() with a binary32 accumulator", "[diagnose][scores]") {
  std::mt19937_64 rng(35);
  // fp32 last: no rounding into F after the sums, so their order shows
  for (const Format& f : {Format::bf16(), Format::fp16(), Format::fp32()}) {
    EvaluationPolicy policy;
    policy.format = f;
    policy.accumulator = Format::fp32();
    policy.summation = Summation::wide_accumulator;
    policy.engine = &ropesim::numeric::mpfr_engine();
    REQUIRE(Float32Dots::applies(policy));
    const Arithmetic F(f, Rounding::nearest_even, ropesim::numeric::mpfr_engine());
    const ropesim::numeric::Binary64Rounding round_f(f, Rounding::nearest_even);
    // N positions × D columns; scores at offset n for p = n..N-1 (not a multiple of 8)
    const std::size_t dim = 12, n = 43, offset = 3;
    const int span = f.emax - f.emin;
    std::vector<float> q(dim * n), k(dim * n);
    std::vector<std::vector<Value>> qv(n, std::vector<Value>(dim)), kv = qv;
    for (std::size_t p = 0; p < n; ++p) {
      for (std::size_t c = 0; c < dim; ++c) {
        for (auto [col, val] : {std::pair{&q, &qv}, std::pair{&k, &kv}}) {
          // mostly magnitudes within 2^±4 (sums that cancel and round at every step, so
          // the order matters), one in forty across the whole range and past it
          const int e =
              rng() % 40 == 0
                  ? f.emin + static_cast<int>(rng() % static_cast<std::uint64_t>(span + 8)) - 4
                  : static_cast<int>(rng() % 9) - 4;
          const double m = std::ldexp(static_cast<double>(rng() % 4096) - 2048.0, e - 11);
          const Value v = F.convert(Value::from_double_exact(m));
          (*val)[p][c] = v;
          (*col)[c * n + p] = static_cast<float>(v.to_double());
        }
      }
    }
    std::vector<float> acc(n);
    Float32Dots::dots(q.data(), k.data(), n, dim, offset, offset, n - offset, acc.data());
    for (std::size_t p = offset; p < n; ++p) {
      const Value want = ropesim::numeric::dot(qv[p], kv[p - offset], policy);
      const double got = round_f.round(static_cast<double>(acc[p - offset]));
      INFO(f.name << " p = " << p << ": " << got << " against " << want.to_double());
      REQUIRE(want.same_bits(Value::from_double_exact(got)));
    }
  }
}

namespace {

using ropesim::proofs::ScoreIsa;
using ropesim::proofs::ScoreRotation;

/// One element of `f` (as a double): mostly magnitudes near 1, some across the whole range,
/// past it (products that overflow) and into the subnormals, and the edge values ±0.
double draw_element(std::mt19937_64& rng, const Format& f, const Arithmetic& F) {
  switch (rng() % 24) {
    case 0:
      return 0.0;
    case 1:
      return -0.0;
    case 2:  // the largest finite element
      return F
          .convert(
              Value::from_double_exact(std::ldexp(2.0 - std::ldexp(1.0, 1 - f.precision), f.emax)))
          .to_double();
    case 3:  // a subnormal
      return std::ldexp(static_cast<double>(rng() % 7 + 1), f.emin - f.precision + 1);
    default:
      break;
  }
  const int span = f.emax - f.emin;
  const int e = rng() % 6 == 0 ? f.emin + static_cast<int>(rng() % static_cast<std::uint64_t>(span))
                               : static_cast<int>(rng() % 5) - 2;
  const double m = std::ldexp(static_cast<double>(rng() % 4096) - 2048.0, e - 11);
  return F.convert(Value::from_double_exact(m)).to_double();
}

/// Bit equality, or both NaN (the kernels promise NaN where the reference is NaN; payloads
/// are read by no caller).
bool same_or_both_nan(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) ||
         std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

}  // namespace

TEST_CASE("ScoreRotation: the scalar rotation equals the MPFR engine's steps",
          "[diagnose][scores]") {
  // The reference: every product, sum and store through numeric::Arithmetic on MPFR, in the
  // order of attention::apply_rotation (hf: x0·c + (−x1)·s, x1·c + x0·s), then the output
  // format and F.
  std::mt19937_64 rng(4);
  const auto& mpfr = ropesim::numeric::mpfr_engine();
  for (const auto& [r, out, f] : {std::tuple{Format::bf16(), Format::bf16(), Format::bf16()},
                                  std::tuple{Format::fp32(), Format::fp32(), Format::bf16()},
                                  std::tuple{Format::fp32(), Format::fp16(), Format::fp16()}}) {
    const Arithmetic R(r, Rounding::nearest_even, mpfr), O(out, Rounding::nearest_even, mpfr),
        FF(f, Rounding::nearest_even, mpfr);
    ScoreRotation k(r, out, f);
    k.nb = 3;
    k.dim = 7;
    k.to_out = !(out == r);
    k.to_f = !(out == f);
    k.round_table = true;  // the table in fp32, rounded into R
    const Arithmetic T(Format::fp32(), Rounding::nearest_even, mpfr);
    for (int trial = 0; trial < 200; ++trial) {
      std::vector<double> x(k.dim), xr(k.dim), c(k.nb), s(k.nb), y(k.dim);
      for (auto& v : x) v = draw_element(rng, f, FF);
      for (std::size_t d = 0; d < k.nb; ++d) {
        c[d] = draw_element(rng, Format::fp32(), T);
        s[d] = draw_element(rng, Format::fp32(), T);
      }
      k.operands(x.data(), xr.data());
      k.rotate_scalar(x.data(), xr.data(), c.data(), s.data(), y.data());
      auto rv = [&](double v) { return R.convert(Value::from_double_exact(v)); };
      for (std::size_t d = 0; d < k.nb; ++d) {
        const Value x0 = rv(x[d]), x1 = rv(x[d + k.nb]), cr = rv(c[d]), sr = rv(s[d]);
        const Value y0 = R.add(R.mul(x0, cr), R.mul(R.negate(x1), sr));
        const Value y1 = R.add(R.mul(x1, cr), R.mul(x0, sr));
        const Value w0 = FF.convert(O.convert(y0)), w1 = FF.convert(O.convert(y1));
        INFO(r.name << "/" << out.name << "/" << f.name << " trial " << trial << " d " << d);
        REQUIRE(same_or_both_nan(y[d], w0.to_double()));
        REQUIRE(same_or_both_nan(y[d + k.nb], w1.to_double()));
      }
      REQUIRE(same_or_both_nan(y[6], FF.convert(Value::from_double_exact(x[6])).to_double()));
    }
  }
}

TEST_CASE("ScoreRotation: the lane kernel equals the scalar rotation bit for bit",
          "[diagnose][scores]") {
  std::mt19937_64 rng(35);
  const auto& mpfr = ropesim::numeric::mpfr_engine();
  std::vector<ScoreIsa> isas{ScoreIsa::baseline};
  if (ropesim::proofs::score_avx2_available()) isas.push_back(ScoreIsa::avx2);
  std::size_t compared = 0, nonfinite = 0;
  for (const auto& [r, out, f] : {std::tuple{Format::bf16(), Format::bf16(), Format::bf16()},
                                  std::tuple{Format::fp16(), Format::fp16(), Format::fp16()},
                                  std::tuple{Format::fp32(), Format::fp32(), Format::bf16()},
                                  std::tuple{Format::fp32(), Format::fp16(), Format::fp16()},
                                  std::tuple{Format::fp32(), Format::fp32(), Format::fp32()}}) {
    const Arithmetic FF(f, Rounding::nearest_even, mpfr);
    const Arithmetic T(Format::fp32(), Rounding::nearest_even, mpfr);
    for (const bool theory : {false, true}) {
      for (const bool adjacent : {false, true}) {
        for (const std::size_t nb : {std::size_t{1}, std::size_t{6}, std::size_t{9}}) {
          ScoreRotation k(r, out, f);
          REQUIRE(k.lanes());
          k.nb = nb;
          k.dim = 2 * nb + 3;  // three elements past the rotary ones
          k.to_out = !(out == r);
          k.to_f = !(out == f);
          k.theory = theory;
          k.adjacent = adjacent;
          k.round_table = !(r == Format::fp32());
          for (int trial = 0; trial < 60; ++trial) {
            std::vector<double> x(k.dim), xr(k.dim), c(nb), s(nb), want(k.dim), got(k.dim);
            for (auto& v : x) v = draw_element(rng, f, FF);
            for (std::size_t d = 0; d < nb; ++d) {
              c[d] = draw_element(rng, Format::fp32(), T);
              s[d] = draw_element(rng, Format::fp32(), T);
              // non-finite table entries, as a path whose positions overflow realises them
              if (rng() % 50 == 0) c[d] = std::numeric_limits<double>::infinity();
              if (rng() % 50 == 0) s[d] = std::numeric_limits<double>::quiet_NaN();
            }
            k.operands(x.data(), xr.data());
            k.rotate_scalar(x.data(), xr.data(), c.data(), s.data(), want.data());
            for (const ScoreIsa isa : isas) {
              std::fill(got.begin(), got.end(), 12345.0);
              k.rotate_lanes(x.data(), xr.data(), c.data(), s.data(), got.data(), isa);
              for (std::size_t j = 0; j < k.dim; ++j) {
                INFO(r.name << "/" << out.name << "/" << f.name << " theory " << theory
                            << " adjacent " << adjacent << " nb " << nb << " j " << j << " isa "
                            << (isa == ScoreIsa::avx2 ? "avx2" : "baseline") << ": " << got[j]
                            << " against " << want[j]);
                REQUIRE(same_or_both_nan(got[j], want[j]));
                ++compared;
                nonfinite += !std::isfinite(want[j]);
              }
            }
          }
        }
      }
    }
  }
  // the draws reached overflow and NaN, not only finite values
  REQUIRE(nonfinite > 100);
  REQUIRE(compared > 10000);
}
