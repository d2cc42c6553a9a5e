#include "proofs/experiments/offset_simulation.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "core/error.hpp"
#include "numeric/exact_decimal.hpp"
#include "proofs/common/residual_space.hpp"
#include "proofs/compiler/gadgets.hpp"

namespace ropesim::proofs {

using attention::Matrix;
using numeric::Value;

namespace {

/// The named residual space of offset_model, in the index order of the file comment:
/// sym:a, sym:b, top, y, raw:P^1..raw:P^k, P^1 top..P^k top, out.
ResidualSpace offset_space(std::uint64_t k) {
  ResidualSpace space;
  for (const char* name : {"sym:a", "sym:b", "top", "y"}) space.add(name);
  for (std::uint64_t l = 1; l <= k; ++l) space.add("raw:P^" + std::to_string(l) + " top");
  for (std::uint64_t l = 1; l <= k; ++l) space.add("P^" + std::to_string(l) + " top");
  space.add("out");
  return space;
}

std::string gate_name(std::uint64_t l) { return "P^" + std::to_string(l) + " top"; }

}  // namespace

std::size_t offset_output_coordinate(std::uint64_t k) { return offset_space(k).index("out"); }

attention::ModelShape offset_model_shape(const FixedOffsetSpec& spec) {
  const double k = static_cast<double>(spec.k);
  attention::ModelShape shape;
  shape.d_model = 5 + 2 * k;
  shape.symbols = 2;
  shape.layers = k + 1;
  shape.ffn_layers = k + 1;
  shape.heads = k + 1;
  shape.head_dims = static_cast<double>(spec.schedule.dimension()) + k;
  shape.value_dims = k + 1;
  shape.hidden = 2 * k + 1;
  return shape;
}

attention::Model offset_model(const FixedOffsetSpec& spec) {
  if (spec.k < 1)
    throw InvalidArgument("the offset k must be at least 1, got " + std::to_string(spec.k));
  const std::uint64_t k = spec.k;
  const ResidualSpace space = offset_space(k);
  const std::size_t d = space.size();
  HeadWiring wiring;
  wiring.space = space;
  wiring.value_source = "sym:a";
  wiring.output_target = "y";
  FixedOffsetHead y = make_fixed_offset_head(spec, wiring);
  const attention::Arithmetic f = numeric::arithmetic(spec.policy);
  const Value one = f.one(), zero = f.zero();

  attention::Model m;
  m.coordinates = space.names();
  m.name = "Y^" + std::to_string(k) + " pi_a";
  m.description = "Y^k head of RoPE-X App D on " + y.schedule.spec + " (C = " + y.C.to_decimal(9) +
                  ", realization " + y.realisation.name() +
                  ") with the P^k gate (THEORY §6-§7, C5)";
  m.policy = spec.policy;
  m.d_model = d;
  m.embedding.alphabet = {"a", "b"};
  std::vector<Value> a(d, zero), b(d, zero), eos(d, zero), bos(d, zero);
  a[space.index("sym:a")] = one;
  a[space.index("top")] = one;
  b[space.index("sym:b")] = one;
  b[space.index("top")] = one;
  eos[space.index("top")] = one;
  m.embedding.symbols = {a, b};
  m.embedding.eos = eos;
  m.embedding.bos = bos;

  // The gate P^k⊤ by the compiler's gadgets (proofs/compiler/gadgets.hpp): P heads (score
  // f_large·ψ, value ψ) re-binarised by 4·(ReLU(r − ⊤/4) − ReLU(r − ⊤/2)), then out = ReLU(y +
  // 2·P^k⊤ − 2·⊤).
  for (std::uint64_t l = 1; l <= k; ++l) {
    attention::Layer layer;
    if (l == 1) layer.heads.push_back(y.head);
    const std::string source = l == 1 ? "top" : gate_name(l - 1);
    layer.heads.push_back(
        past_head(space, source, "raw:" + gate_name(l), y.f_large, f, "P" + std::to_string(l)));
    layer.ffn = assemble_feed_forward(
        rebinarise_units("raw:" + gate_name(l), gate_name(l), mpq_class(1, 4), mpq_class(1, 2)),
        space, f);
    m.layers.push_back(std::move(layer));
  }
  attention::Layer gate;
  gate.ffn = assemble_feed_forward(
      {HiddenUnit{{{"y", 1}, {gate_name(k), 2}, {"top", -2}}, {{"out", 1}}}}, space, f);
  m.layers.push_back(std::move(gate));
  m.classifier.weights.assign(d, zero);
  m.classifier.weights[space.index("out")] = one;
  m.classifier.bias = f.from_rational(mpq_class(-1, 2));
  m.validate();
  return m;
}

bool offset_formula(std::string_view word, std::uint64_t k, std::uint64_t position) {
  if (position == 0 || position <= k) return false;
  const std::uint64_t j = position - k;  // 1-based position of the symbol read
  if (j > word.size()) return false;
  return word[j - 1] == 'a';
}

WorkEstimate offset_simulation_work(const FixedOffsetSpec& spec, std::uint64_t L,
                                    const SimulationOptions& options) {
  const attention::ModelShape model = offset_model_shape(spec);  // not built: k may be 10^6
  WorkEstimate total = attention::run_work(model, 0);
  total.units = 0;
  const std::uint64_t exhaustive = std::min(L, options.exhaustive_length);
  for (std::uint64_t n = 0; n <= exhaustive; ++n) {
    total.units += std::ldexp(attention::run_work(model, n).units, static_cast<int>(n));
  }
  const std::uint64_t longest = std::min(L, options.random_max_length);
  if (longest > exhaustive) {
    total.units +=
        static_cast<double>(options.random_words) * attention::run_work(model, longest).units;
  }
  // Memory: the model itself (its numbers as Values) and one run of the longest word.
  total.bytes = attention::spec_number_count(model) * static_cast<double>(sizeof(Value)) +
                attention::run_work(model, std::max(exhaustive, longest)).bytes;
  return total;
}

SimulationReport check_offset_simulation(const FixedOffsetSpec& spec, std::uint64_t L,
                                         const SimulationOptions& options) {
  if (L < 1) throw InvalidArgument("the simulation length L must be at least 1");
  const auto start = std::chrono::steady_clock::now();
  const attention::Model model = offset_model(spec);
  const std::size_t out = offset_output_coordinate(spec.k);
  SimulationReport report;
  report.L = L;
  report.exhaustive_length = std::min(L, options.exhaustive_length);
  attention::RunOptions run_options;
  run_options.trace_all = true;

  auto check = [&](const std::string& word) {
    const attention::RunResult r = attention::run(model, word, run_options);
    ++report.words;
    const auto& last = r.layers.back();
    for (std::size_t t = 0; t < last.size(); ++t) {
      const std::uint64_t p = last[t].position;
      const bool expected = offset_formula(word, spec.k, p);
      const Value& v = last[t].output[out];
      const bool ok = v.is_finite() && attention::exact_rational(v) == (expected ? 1 : 0);
      ++report.positions;
      if (!ok) {
        report.first = Disagreement{word, p, expected, numeric::exact_decimal(v)};
        return false;
      }
    }
    if (r.accept != offset_formula(word, spec.k, word.size() + 1)) {
      report.first =
          Disagreement{word, word.size() + 1, !r.accept, numeric::exact_decimal(r.output)};
      return false;
    }
    return true;
  };

  bool ok = true;
  for (std::uint64_t n = 0; ok && n <= report.exhaustive_length; ++n) {
    for (std::uint64_t bits = 0; ok && bits < (std::uint64_t{1} << n); ++bits) {
      std::string word(n, 'a');
      for (std::uint64_t c = 0; c < n; ++c) {
        if ((bits >> (n - 1 - c)) & 1) word[c] = 'b';
      }
      ok = check(word);
    }
  }
  const std::uint64_t longest = std::min(L, options.random_max_length);
  std::mt19937_64 rng(options.seed);
  for (std::size_t w = 0; ok && w < options.random_words && longest > report.exhaustive_length;
       ++w) {
    std::uint64_t n = longest;
    if (w > 0)
      n = std::uniform_int_distribution<std::uint64_t>(report.exhaustive_length + 1, longest)(rng);
    std::string word(n, 'a');
    for (auto& c : word) c = (rng() & 1) ? 'b' : 'a';
    ok = check(word);
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

std::uint64_t simulation_length(std::optional<std::uint64_t> requested, std::uint64_t n_max) {
  return requested ? *requested : n_max;
}

SimulationVerdict simulate_certified_range(const FixedOffsetSpec& head, std::uint64_t n_max,
                                           std::optional<std::uint64_t> requested,
                                           const SimulationOptions& options) {
  SimulationVerdict v;
  v.L = simulation_length(requested, n_max);
  v.k = head.k;
  v.n_max = n_max;
  v.within_certified_range = v.L <= n_max;
  if (v.L < head.k) return v;  // Cor 4.1 needs k ≤ L
  v.report = check_offset_simulation(head, v.L, options);
  if (!v.report->first) {
    v.outcome = SimulationOutcome::agrees;
  } else {
    v.outcome = v.within_certified_range ? SimulationOutcome::bug : SimulationOutcome::allowed;
  }
  return v;
}

nlohmann::json to_json(const SimulationVerdict& v) {
  nlohmann::json sim;
  sim["L"] = v.L;
  if (v.outcome == SimulationOutcome::not_run) {
    sim["note"] = "L < k: Cor 4.1 needs k <= L <= N_max; nothing to simulate";
    return sim;
  }
  const auto& r = *v.report;
  sim["exhaustive_length"] = r.exhaustive_length;
  sim["words"] = r.words;
  sim["positions"] = r.positions;
  sim["within_certified_range"] = v.within_certified_range;
  if (r.first) {
    sim["disagreement"] = {{"word", r.first->word},
                           {"position", r.first->position},
                           {"expected", r.first->expected},
                           {"got", r.first->got}};
  } else {
    sim["disagreement"] = nullptr;
  }
  return sim;
}

}  // namespace ropesim::proofs
