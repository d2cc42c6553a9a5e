// Item (i) of [RRWG]: the previous-token head on θ_1 = 1 and the NoPE check (see the header).
#include "proofs/literature/positional_head.hpp"

#include <random>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "numeric/value.hpp"

namespace ropesim::proofs {

HorizonReport previous_token_head(const numeric::Format& F, const std::string& realisation,
                                  std::uint64_t k) {
  HorizonSpec spec;
  spec.head.schedule = attention::single_schedule(1);  // θ_1 = 1 rad/token (THEORY §3)
  spec.head.k = k;
  spec.head.realisation = realisation;
  spec.head.policy.format = F;
  spec.auto_C = true;
  return horizon(spec);
}

namespace {

/// γ_m = m·u/(1 − m·u) (Higham §3.1), exactly.
mpq_class gamma(std::size_t m, const mpq_class& u) {
  const mpq_class mu = mpq_class(static_cast<unsigned long>(m)) * u;
  return mu / (1 - mu);
}

std::size_t ceil_log2(std::size_t n) {
  std::size_t e = 0;
  while ((std::size_t{1} << e) < n) ++e;
  return e;
}

}  // namespace

NopeCheck nope_previous_token_check(const NopeCheckSpec& spec) {
  const auto& policy = spec.policy;
  if (spec.trials == 0) throw InvalidArgument("NoPE check: trials must be at least 1");
  if (spec.length < 3)
    throw InvalidArgument("NoPE check: the query position n must be at least 3 (got " +
                          std::to_string(spec.length) + ")");
  if (policy.rounding != numeric::Rounding::nearest_even)
    throw InvalidArgument("NoPE check: the bound is stated for round-to-nearest-even only");
  if (policy.summation == numeric::Summation::wide_accumulator)
    throw InvalidArgument(
        "NoPE check: summation must be sequential, pairwise or exact (not wide-accumulator)");
  if (policy.format.kind != numeric::Format::Kind::floating)
    throw InvalidArgument("NoPE check: F must be a floating-point format");

  const numeric::Arithmetic f = numeric::arithmetic(policy);
  std::mt19937_64 rng(spec.seed);
  // Q, K: 2 × 4, entries in {−1, −3/4, …, 1} (9 values), columns a, b, c, BOS.
  std::vector<std::vector<numeric::Value>> Qcol(4), Kcol(4);
  for (auto* m : {&Qcol, &Kcol}) {
    for (auto& column : *m) {
      for (int r = 0; r < 2; ++r)
        column.push_back(f.from_rational(mpq_class(static_cast<long>(rng() % 9) - 4, 4)));
    }
  }
  const numeric::Value one = f.from_rational(1), zero = f.from_rational(0);
  const std::size_t n = spec.length, N = n;  // keys: BOS (0) and x_1..x_{n-1}
  const mpq_class u = [&] {
    mpq_class v = 1;
    mpz_mul_2exp(v.get_den_mpz_t(), v.get_den_mpz_t(),
                 static_cast<mp_bitcnt_t>(policy.format.precision));
    return v;
  }();
  std::size_t m = 1;
  if (policy.summation == numeric::Summation::sequential) m = N - 1;
  if (policy.summation == numeric::Summation::pairwise) m = ceil_log2(N);
  const mpq_class g = gamma(m, u);
  NopeCheck out;
  out.keys = N;
  out.bound = (1 + u) * (1 + g) / (1 - g) - (1 - u) * (1 - g) / (1 + g);
  mpq_class min_normal = 1;
  mpz_mul_2exp(min_normal.get_den_mpz_t(), min_normal.get_den_mpz_t(),
               static_cast<mp_bitcnt_t>(-policy.format.emin));

  // The head's output at n on prefix `word` (letters 0 = a, 1 = b, 2 = c) and query letter.
  auto output = [&](const std::vector<int>& word, int query, bool& underflow) {
    std::vector<numeric::Value> scores;
    std::vector<std::vector<numeric::Value>> values;
    scores.push_back(numeric::dot(Qcol[static_cast<std::size_t>(query)], Kcol[3], policy));
    values.push_back({zero});
    for (int x : word) {
      scores.push_back(numeric::dot(Qcol[static_cast<std::size_t>(query)],
                                    Kcol[static_cast<std::size_t>(x)], policy));
      values.push_back({x == 0 ? one : zero});
    }
    const auto a = attention::attend(scores, values, 1, policy, attention::SoftmaxVariant::stable);
    for (const auto& w : a.weights) {
      if (!w.is_zero() && abs(numeric::exact_rational(w)) < min_normal) underflow = true;
    }
    return a.output[0];
  };

  for (std::size_t t = 0; t < spec.trials; ++t) {
    std::vector<int> word(n - 1);
    for (auto& x : word) x = static_cast<int>(rng() % 3);
    word.back() = 0;  // ends in a
    // An earlier non-a letter to swap with (create one at a random place if there is none).
    std::vector<std::size_t> others;
    for (std::size_t j = 0; j + 1 < word.size(); ++j)
      if (word[j] != 0) others.push_back(j);
    if (others.empty()) {
      const std::size_t j = rng() % (word.size() - 1);
      word[j] = 1 + static_cast<int>(rng() % 2);
      others.push_back(j);
    }
    std::vector<int> permuted = word;
    std::swap(permuted[others[rng() % others.size()]], permuted.back());
    const int query = static_cast<int>(rng() % 3);
    bool underflow = false;
    const numeric::Value o = output(word, query, underflow);
    const numeric::Value o2 = output(permuted, query, underflow);
    ++out.pairs;
    if (o.same_bits(o2)) ++out.identical;
    const mpq_class d = abs(numeric::exact_rational(o) - numeric::exact_rational(o2));
    if (d > out.max_difference) out.max_difference = d;
    if (underflow) ++out.underflows;
  }
  return out;
}

}  // namespace ropesim::proofs
