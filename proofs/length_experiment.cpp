#include "proofs/length_experiment.hpp"

#include <algorithm>
#include <random>

#include "attention/prefix_oracle.hpp"
#include "logic/evaluate.hpp"
#include "logic/formula.hpp"
#include "numeric/error.hpp"
#include "proofs/compiler.hpp"

namespace ropesim::proofs {

namespace {

void validate(const LengthExperimentSpec& spec) {
  if (spec.alphabet.empty())
    throw InvalidArgument("the alphabet is empty; give at least one letter");
  for (const auto& s : spec.alphabet) {
    if (s.size() != 1) {
      throw InvalidArgument("alphabet symbol '" + s +
                            "' is not one letter; accepted: single letters, e.g. ab");
    }
  }
  if (spec.schedules.empty()) throw InvalidArgument("no schedule; give at least one");
  if (spec.formats.empty()) throw InvalidArgument("no format; give at least one");
  if (spec.lengths.empty()) throw InvalidArgument("no length; give at least one");
  for (std::size_t i = 0; i < spec.lengths.size(); ++i) {
    if (spec.lengths[i] == 0) throw InvalidArgument("lengths must be at least 1, got 0");
    if (i > 0 && spec.lengths[i] <= spec.lengths[i - 1])
      throw InvalidArgument("lengths must be ascending without repeats");
  }
  if (spec.words == 0) throw InvalidArgument("words must be at least 1");
}

/// Word w of the experiment: `length` letters drawn uniformly from the alphabet.
std::string random_word(const LengthExperimentSpec& spec, std::size_t w, std::uint64_t length) {
  std::mt19937_64 rng(spec.seed + w);
  std::uniform_int_distribution<std::size_t> letter(0, spec.alphabet.size() - 1);
  std::string word(length, ' ');
  for (char& c : word) c = spec.alphabet[letter(rng)][0];
  return word;
}

}  // namespace

std::vector<LengthSeries> length_experiment(const LengthExperimentSpec& spec,
                                            const LengthProgress& progress) {
  validate(spec);
  const ltl::Formula formula = ltl::parse(spec.formula);
  const std::uint64_t longest = spec.lengths.back();

  // The formula's truth on every requested prefix of every word: the same for every model.
  std::vector<std::string> words;
  std::vector<std::vector<bool>> truth;  // [word][length index]
  for (std::size_t w = 0; w < spec.words; ++w) {
    words.push_back(random_word(spec, w, longest));
    std::vector<bool> t;
    for (const std::uint64_t L : spec.lengths)
      t.push_back(ltl::accepts(formula, ltl::letters(std::string_view(words.back()).substr(0, L))));
    truth.push_back(std::move(t));
  }

  std::vector<LengthSeries> out;
  const std::size_t models = spec.schedules.size() * spec.formats.size();
  for (const auto& schedule : spec.schedules) {
    for (const auto& format : spec.formats) {
      LengthSeries series;
      series.schedule = schedule.spec;
      series.format = format.name;
      CompileOptions options;
      options.policy.format = format;
      options.policy.rounding = spec.rounding;
      options.offset_schedule = schedule;
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
        const attention::PrefixOracle oracle(compiled->model);
        for (const std::uint64_t L : spec.lengths) series.rows.push_back({L, 0, 0});
        for (std::size_t w = 0; w < words.size(); ++w) {
          const attention::PrefixRun run = oracle.run(words[w]);
          for (std::size_t i = 0; i < spec.lengths.size(); ++i) {
            series.rows[i].words += 1;
            series.rows[i].correct += run.accept[spec.lengths[i]] == truth[w][i] ? 1 : 0;
          }
        }
        for (const LengthRow& row : series.rows) {
          if (row.correct != row.words) break;
          series.longest_all_right = row.length;
        }
      }
      out.push_back(std::move(series));
      if (progress) progress(out.size(), models);
    }
  }
  return out;
}

}  // namespace ropesim::proofs
