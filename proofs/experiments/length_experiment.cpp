#include "proofs/experiments/length_experiment.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>

#include "attention/transformer/prefix_oracle.hpp"
#include "automata/minimise.hpp"
#include "automata/regex.hpp"
#include "automata/word_counts.hpp"
#include "core/error.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/languages/formula_automaton.hpp"
#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs {

namespace {

void validate_alphabet(const std::vector<std::string>& alphabet) {
  if (alphabet.empty()) throw InvalidArgument("the alphabet is empty; give at least one letter");
  for (const auto& s : alphabet) {
    if (s.size() != 1) {
      throw InvalidArgument("alphabet symbol '" + s +
                            "' is not one letter; accepted: single letters, e.g. ab");
    }
  }
}

void validate_lengths(const std::vector<std::uint64_t>& lengths, std::size_t words) {
  if (lengths.empty()) throw InvalidArgument("no length; give at least one");
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (lengths[i] == 0) throw InvalidArgument("lengths must be at least 1, got 0");
    if (i > 0 && lengths[i] <= lengths[i - 1])
      throw InvalidArgument("lengths must be ascending without repeats");
  }
  if (words == 0) throw InvalidArgument("words must be at least 1");
}

void validate(const LengthExperimentSpec& spec) {
  validate_alphabet(spec.alphabet);
  if (spec.schedules.empty()) throw InvalidArgument("no schedule; give at least one");
  if (spec.formats.empty()) throw InvalidArgument("no format; give at least one");
  validate_lengths(spec.lengths, spec.words);
}

/// The words of one length and side.
struct SideWords {
  std::vector<std::string> words;
  bool empty = false, exhaustive = false;
};

/// The balanced words of one length and side (see length_experiment), as text. `check`, when
/// given, is a second evaluation of the language: it must say member exactly for the members.
SideWords side_words(const automata::WordCounts& counts, std::uint64_t n, automata::Side side,
                     std::size_t words, std::uint64_t seed,
                     const std::function<bool(const std::string&)>& check) {
  SideWords out;
  const mpz_class total = counts.words(n, side);
  const auto keep = [&](const automata::Word& w) {
    std::string text = counts.dfa().text(w);
    if (check && check(text) != (side == automata::Side::members)) {
      throw std::logic_error("balanced words: the language's DFA and its formula disagree on '" +
                             text + "'");
    }
    out.words.push_back(std::move(text));
  };
  if (sgn(total) == 0) {
    out.empty = true;
  } else if (total <= static_cast<unsigned long>(words)) {
    out.exhaustive = true;
    for (unsigned long r = 0; r < total.get_ui(); ++r) keep(counts.unrank(n, side, r));
  } else {
    const std::uint64_t s = side == automata::Side::members ? 0 : 1;
    std::mt19937_64 rng(seed + 0x9E3779B97F4A7C15ULL * (2 * n + s));
    for (std::size_t w = 0; w < words; ++w) keep(*counts.sample(n, side, rng));
  }
  return out;
}

/// The offsets k of the formula's Y^k operators, ascending, each once.
std::vector<std::uint64_t> yesterday_offsets(const ltl::Formula& formula) {
  std::vector<std::uint64_t> ks;
  for (const auto& node : formula.nodes())
    if (node.op == ltl::Operator::yesterday) ks.push_back(node.k);
  std::sort(ks.begin(), ks.end());
  ks.erase(std::unique(ks.begin(), ks.end()), ks.end());
  return ks;
}

/// For each n in [1, longest]: the three distances 1 ≤ d ≤ n with the largest ideal score
/// S(d)/C of a head on `schedule` (equal weights; the smaller d on ties), largest first.
std::vector<std::vector<std::uint64_t>> aliasing_distances(const attention::Schedule& schedule,
                                                           std::uint64_t longest) {
  FixedOffsetSpec spec;
  spec.schedule = schedule;
  const FixedOffsetHead head = make_fixed_offset_head(spec);
  std::vector<std::vector<std::uint64_t>> top(longest + 1);
  std::vector<std::pair<double, std::uint64_t>> best;  // (S(d), d), largest S first
  for (std::uint64_t n = 1; n <= longest; ++n) {
    best.emplace_back(head.ideal.approximate(static_cast<std::int64_t>(n)), n);
    std::stable_sort(best.begin(), best.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    if (best.size() > 3) best.pop_back();
    for (const auto& [value, d] : best) top[n].push_back(d);
  }
  return top;
}

/// Offset-aliasing word number `a` of length L (see length_experiment).
std::string aliasing_word(const LengthExperimentSpec& spec, std::uint64_t L, std::size_t a,
                          const std::vector<std::uint64_t>& ks,
                          const std::vector<std::vector<std::uint64_t>>& distances) {
  std::mt19937_64 rng(spec.seed ^ (0x9E3779B97F4A7C15ULL + L * 1000003ULL + a));
  std::uniform_int_distribution<std::size_t> letter(0, spec.alphabet.size() - 1);
  std::string word(L, ' ');
  for (char& c : word) c = spec.alphabet[letter(rng)][0];
  const auto next_letter = [&](char c) {
    for (std::size_t i = 0; i < spec.alphabet.size(); ++i)
      if (spec.alphabet[i][0] == c) return spec.alphabet[(i + 1) % spec.alphabet.size()][0];
    return c;
  };
  for (const std::uint64_t k : ks) {
    if (k > L) continue;
    const std::uint64_t t = L + 1 - k;  // 1-based position the EOS query should read
    if (t < 2) continue;
    for (const std::uint64_t n : distances[t - 1]) word[t - n - 1] = next_letter(word[t - 1]);
  }
  return word;
}

}  // namespace

std::vector<LengthSeries> length_experiment(const LengthExperimentSpec& spec,
                                            const LengthProgress& progress) {
  validate(spec);
  const ltl::Formula formula = ltl::parse(spec.formula);
  const std::uint64_t longest = spec.lengths.back();
  const std::vector<std::uint64_t> ks = yesterday_offsets(formula);

  // The balanced words of every requested length: the same for every model.
  const automata::Dfa dfa = automata::minimise(formula_dfa(formula, spec.alphabet));
  const automata::WordCounts counts(dfa, longest);
  // A second evaluation of the formula: the DFA and ltl::accepts must agree on every word.
  const auto check = [&](const std::string& w) { return ltl::accepts(formula, ltl::letters(w)); };
  std::vector<SideWords> members, nonmembers;  // [length index]
  for (const std::uint64_t L : spec.lengths) {
    members.push_back(side_words(counts, L, automata::Side::members, spec.words, spec.seed, check));
    nonmembers.push_back(
        side_words(counts, L, automata::Side::nonmembers, spec.words, spec.seed, check));
  }

  std::vector<LengthSeries> out;
  const std::size_t models = spec.schedules.size() * spec.formats.size();
  for (const auto& schedule : spec.schedules) {
    std::vector<std::vector<std::string>> aliasing;  // [length index][a]
    std::vector<std::vector<bool>> aliasing_truth;
    if (!ks.empty() && spec.adversarial > 0) {
      const auto distances = aliasing_distances(schedule, longest);
      for (const std::uint64_t L : spec.lengths) {
        std::vector<std::string> at_L;
        std::vector<bool> t;
        for (std::size_t a = 0; a < spec.adversarial; ++a) {
          at_L.push_back(aliasing_word(spec, L, a, ks, distances));
          t.push_back(ltl::accepts(formula, ltl::letters(at_L.back())));
        }
        aliasing.push_back(std::move(at_L));
        aliasing_truth.push_back(std::move(t));
      }
    }
    for (const auto& format : spec.formats) {
      LengthSeries series;
      series.schedule = schedule.spec;
      series.format = format.name;
      CompileOptions options;
      options.policy.format = format;
      options.policy.rounding = spec.rounding;
      options.offset_schedule = schedule;
      // Every rotary head, MOD atoms too (THEORY §7 C4'), unless told to keep their tables.
      if (spec.schedule_for_mod) options.mod_schedule = schedule;
      options.suggest_format = false;
      std::optional<CompiledModel> compiled;
      try {
        compiled = compile(formula, spec.alphabet, options);
      } catch (const Refusal& e) {
        if (e.reason() == RefusalReason::input) throw;
        series.refused = e.what();
      }
      if (compiled) {
        series.certified_length = compiled->certified_length;
        series.certified_length_at_limit = compiled->certified_length_at_limit;
        if (!compiled->bounded_mod_heads.empty())
          series.mod_atoms = "the schedule (C4', bounded)";
        else if (!compiled->mod_heads.empty())
          series.mod_atoms = "periodic tables (C4)";
        const attention::PrefixOracle oracle(compiled->model);
        for (std::size_t i = 0; i < spec.lengths.size(); ++i) {
          LengthRow row;
          row.length = spec.lengths[i];
          row.members_empty = members[i].empty;
          row.members_exhaustive = members[i].exhaustive;
          row.nonmembers_empty = nonmembers[i].empty;
          row.nonmembers_exhaustive = nonmembers[i].exhaustive;
          for (const std::string& w : members[i].words) {
            row.members += 1;
            row.members_correct += attention::accepts_output(oracle.output(w)) ? 1 : 0;
          }
          for (const std::string& w : nonmembers[i].words) {
            row.nonmembers += 1;
            row.nonmembers_correct += attention::accepts_output(oracle.output(w)) ? 0 : 1;
          }
          series.rows.push_back(row);
        }
        for (std::size_t i = 0; i < aliasing.size(); ++i) {
          for (std::size_t a = 0; a < aliasing[i].size(); ++a) {
            const bool accept = attention::accepts_output(oracle.output(aliasing[i][a]));
            series.rows[i].adversarial_words += 1;
            series.rows[i].adversarial_correct += accept == aliasing_truth[i][a] ? 1 : 0;
          }
        }
        for (const LengthRow& row : series.rows) {
          if (row.correct() != row.words()) break;
          series.longest_all_right = row.length;
        }
      }
      out.push_back(std::move(series));
      if (progress) progress(out.size(), models);
    }
  }
  return out;
}

std::vector<BalancedWords> balanced_words(const BalancedWordsSpec& spec) {
  validate_alphabet(spec.alphabet);
  validate_lengths(spec.lengths, spec.words);
  if (spec.formula.empty() == spec.regex.empty())
    throw InvalidArgument("give the language as a formula or as a regex (exactly one)");
  std::optional<ltl::Formula> formula;
  std::function<bool(const std::string&)> check;
  automata::Dfa dfa = [&] {
    if (spec.regex.empty()) {
      formula = ltl::parse(spec.formula);
      check = [&](const std::string& w) { return ltl::accepts(*formula, ltl::letters(w)); };
      return automata::minimise(formula_dfa(*formula, spec.alphabet));
    }
    return automata::minimise(automata::regex_to_dfa(spec.regex, spec.alphabet));
  }();
  const automata::WordCounts counts(std::move(dfa), spec.lengths.back());
  std::vector<BalancedWords> out;
  for (const std::uint64_t L : spec.lengths) {
    SideWords m = side_words(counts, L, automata::Side::members, spec.words, spec.seed, check);
    SideWords n = side_words(counts, L, automata::Side::nonmembers, spec.words, spec.seed, check);
    BalancedWords row;
    row.length = L;
    row.members = std::move(m.words);
    row.nonmembers = std::move(n.words);
    row.members_empty = m.empty;
    row.nonmembers_empty = n.empty;
    row.members_exhaustive = m.exhaustive;
    row.nonmembers_exhaustive = n.exhaustive;
    out.push_back(std::move(row));
  }
  return out;
}

WorkEstimate length_experiment_work(const LengthExperimentSpec& spec, std::size_t series) {
  WorkEstimate work;
  work.what = "attention scores";
  double per_model = 0;
  for (const std::uint64_t L : spec.lengths) {
    per_model += (2 * static_cast<double>(spec.words) + static_cast<double>(spec.adversarial)) *
                 (double(L) + 2) * (double(L) + 2) / 2;
  }
  work.units =
      per_model * static_cast<double>(series) * static_cast<double>(spec.formats.size()) * 32;
  work.units_per_second = 2e7;
  return work;
}

}  // namespace ropesim::proofs
