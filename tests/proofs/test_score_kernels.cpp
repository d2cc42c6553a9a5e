// `ropesim diagnose`'s binary32 score kernel (proofs/reports/score_kernels.hpp: Float32Dots)
// against numeric::dot() — the reference, every step through numeric::Arithmetic — bit for bit,
// on columns of bf16, fp16 and fp32 values whose products overflow binary32, fall into its
// subnormals and below, and cancel.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
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
