// attend() and head_step() take a binary64 path (numeric::Binary64Dot, exp and divisions once
// per distinct operand) when F allows it. The reference here is the definition written out
// with the general operations: scores by numeric::dot, weights by softmax(), outputs by dot()
// of the weights and each value column (THEORY §2, §2.1), compared bit for bit on random
// inputs with many repeated and zero entries, in every rounding mode and summation policy the
// fast path takes, and with infinities (which must fall back).
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "attention/transformer/transformer.hpp"

using namespace ropesim::attention;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;
using ropesim::numeric::Summation;
using ropesim::numeric::Value;

namespace {

Value pick(std::mt19937_64& rng, const ropesim::numeric::Arithmetic& f) {
  // Few distinct values, zeros of both signs, large and tiny magnitudes.
  static const double pool[] = {0.0,   -0.0,     1.0,       -1.0, 0.5,     3.25,
                                -7.75, 17.34375, -17.34375, 1e-3, 60000.0, -2.0e-7};
  std::uniform_int_distribution<std::size_t> i(0, std::size(pool) - 1);
  return f.convert(Value::from_double_exact(pool[i(rng)]));
}

}  // namespace

TEST_CASE("attend/head_step binary64 path equals softmax + dot bit for bit",
          "[transformer][fast-path]") {
  std::mt19937_64 rng(20261201);
  int compared = 0;
  for (const Format& F :
       {Format::fp16(), Format::bf16(), Format::fp32(), Format::fp8e4m3(), Format::fp8e5m2()}) {
    for (Rounding r :
         {Rounding::nearest_even, Rounding::toward_zero, Rounding::upward, Rounding::downward}) {
      for (Summation sum :
           {Summation::sequential, Summation::pairwise, Summation::wide_accumulator}) {
        EvaluationPolicy policy;
        policy.format = F;
        policy.rounding = r;
        policy.summation = sum;
        policy.accumulator = Format::fp32();
        const auto f = ropesim::numeric::arithmetic(policy);
        for (SoftmaxVariant variant :
             {SoftmaxVariant::stable, SoftmaxVariant::no_max_subtraction}) {
          for (int trial = 0; trial < 20; ++trial) {
            const std::size_t n = 1 + rng() % 40, dim = 1 + rng() % 3, value_dim = 1 + rng() % 3;
            AttentionHead head;
            head.head_dim = dim;
            head.value_dim = value_dim;
            if (trial % 3 == 0) head.scale = f.convert(Value::from_double_exact(0.25));
            std::vector<Value> q(dim);
            for (auto& x : q) x = pick(rng, f);
            std::vector<std::vector<Value>> keys(n, std::vector<Value>(dim)),
                values(n, std::vector<Value>(value_dim));
            for (auto& k : keys)
              for (auto& x : k) x = pick(rng, f);
            for (auto& v : values)
              for (auto& x : v) x = pick(rng, f);
            const HeadStep step = head_step(head, q, keys, values, policy, variant);
            // The definition with the general operations.
            std::vector<Value> scores(n);
            for (std::size_t j = 0; j < n; ++j) {
              scores[j] = ropesim::numeric::dot(q, keys[j], policy);
              if (head.scale) scores[j] = f.mul(scores[j], *head.scale);
            }
            const std::vector<Value> weights = softmax(scores, policy, variant);
            CAPTURE(F.name, static_cast<int>(r), static_cast<int>(sum), static_cast<int>(variant),
                    trial);
            for (std::size_t j = 0; j < n; ++j) REQUIRE(step.scores[j].same_bits(scores[j]));
            for (std::size_t j = 0; j < n; ++j)
              REQUIRE(step.attention.weights[j].same_bits(weights[j]));
            for (std::size_t d = 0; d < value_dim; ++d) {
              std::vector<Value> column(n);
              for (std::size_t j = 0; j < n; ++j) column[j] = values[j][d];
              REQUIRE(step.attention.output[d].same_bits(
                  ropesim::numeric::dot(weights, column, policy)));
            }
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared == 5 * 4 * 3 * 2 * 20);
}
