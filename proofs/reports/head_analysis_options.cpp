// Reading the options of the head analysis (proofs/reports/head_analysis.hpp): the model in two
// formats, the words, the positional share and the work budget.
#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <set>

#include "attention/transformer/model_spec.hpp"
#include "core/budget.hpp"
#include "core/error.hpp"
#include "io/files.hpp"
#include "numeric/exact.hpp"
#include "numeric/format.hpp"
#include "numeric/spec_lists.hpp"
#include "proofs/experiments/length_study.hpp"
#include "proofs/reports/head_analysis.hpp"

namespace ropesim::proofs {

namespace {

/// The model spec read in `format` (none: the spec's own), its errors prefixed by the file
/// name as attention::load_model prefixes them.
attention::Model parse_in(const std::string& text, const std::string& file,
                          const std::optional<numeric::Format>& format) {
  attention::ModelLoadOptions load;
  load.format = format;
  try {
    return attention::parse_model(text, load);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(file + ": " + e.what());
  }
}

/// The words of one length: every word when |Σ|^n ≤ per_length (in the alphabet's order),
/// else per_length distinct words, letters drawn from std::mt19937_64(seed + n) by value
/// modulo |Σ|, a repeat drawn again.
std::vector<std::string> words_of_length(const std::vector<std::string>& alphabet, std::uint64_t n,
                                         std::uint64_t per_length, std::uint64_t seed) {
  const std::uint64_t a = alphabet.size();
  const bool several = std::any_of(alphabet.begin(), alphabet.end(),
                                   [](const std::string& s) { return s.size() != 1; });
  const auto spell = [&](const std::vector<std::uint64_t>& letters) {
    std::string w;
    for (std::size_t i = 0; i < letters.size(); ++i)
      w += (several && i ? " " : "") + alphabet[letters[i]];
    // one symbol of several characters: a blank makes tokenize split on blanks, not characters
    if (several && letters.size() == 1) w += " ";
    return w;
  };
  double count = 1;
  for (std::uint64_t i = 0; i < n && count <= static_cast<double>(per_length); ++i)
    count *= static_cast<double>(a);
  std::vector<std::string> out;
  if (count <= static_cast<double>(per_length)) {
    std::vector<std::uint64_t> letters(n, 0);
    for (;;) {
      out.push_back(spell(letters));
      std::size_t i = n;
      while (i > 0 && letters[i - 1] == a - 1) letters[--i] = 0;
      if (i == 0) return out;
      ++letters[i - 1];
    }
  }
  std::mt19937_64 rng(seed + n);
  std::set<std::string> seen;
  while (out.size() < per_length) {
    std::vector<std::uint64_t> letters(n);
    for (auto& l : letters) l = rng() % a;
    std::string w = spell(letters);
    if (seen.insert(w).second) out.push_back(std::move(w));
  }
  return out;
}

}  // namespace

HeadAnalysisOptions head_analysis_options(const HeadAnalysisArguments& a) {
  HeadAnalysisOptions o;
  o.model_file = a.model_file;
  if (a.words && a.lengths)
    throw InvalidArgument("--words: give either --words or --lengths, not both");
  if (a.per_length < 1 || a.per_length > 100000) {
    throw InvalidArgument(
        fmt::format("--per-length: {} is outside the accepted range 1..100000", a.per_length));
  }
  const mpq_class share = with_context(
      "--positional-share", [&] { return numeric::parse_rational_exact(a.positional_share); });
  if (share <= 0 || share > 1) {
    throw InvalidArgument("--positional-share: '" + a.positional_share +
                          "' is not in (0, 1]; accepted: a decimal such as 0.9");
  }
  o.positional_share = share;
  if (a.max_length && (*a.max_length < 1 || *a.max_length > kMaxScanLength)) {
    throw InvalidArgument(fmt::format("--max-length: {} is outside the accepted range 1..{}",
                                      *a.max_length, kMaxScanLength));
  }
  o.max_length = a.max_length;
  std::optional<numeric::Format> format;
  if (a.format) format = with_context("--format", [&] { return numeric::parse_format(*a.format); });
  const auto reference =
      with_context("--reference-format", [&] { return numeric::parse_format(a.reference_format); });
  const std::string text = io::read_input_file(a.model_file, "model spec file (JSON)");
  o.model = parse_in(text, a.model_file, format);
  o.reference = parse_in(text, a.model_file, reference);
  for (std::size_t l = 0; l < o.model.layers.size(); ++l) {
    for (std::size_t h = 0; h < o.model.layers[l].heads.size(); ++h) {
      if (o.model.layers[l].heads[h].formats) {
        throw InvalidArgument(fmt::format(
            "{}: layers[{}].heads[{}] has per-tensor formats (mixed-format attention), which "
            "analyse heads does not cover; accepted: heads computed in the model's format",
            a.model_file, l, h));
      }
    }
  }
  o.per_length = a.per_length;
  o.seed = a.seed;
  if (a.words) {
    o.word_source = "given";
    o.words = numeric::split_list(*a.words, "--words");
    for (const auto& w : o.words)
      (void)with_context("--words", [&] { return attention::tokenize(o.model, w); });
  } else {
    o.lengths = parse_lengths(a.lengths.value_or("1..16"));
    for (const std::uint64_t n : o.lengths) {
      auto words = words_of_length(o.model.embedding.alphabet, n, a.per_length, a.seed);
      o.words.insert(o.words.end(), words.begin(), words.end());
    }
  }
  WorkEstimate work = attention::run_work(o.model, 0);
  work.units = 0;
  for (const auto& w : o.words) {
    const auto symbols = attention::tokenize(o.model, w).size();
    work.units += 3 * attention::run_work(o.model, symbols).units;  // the traced run, 2 oracles
  }
  Budget budget;
  budget.unlimited = a.allow_slow;
  check_budget(a.words ? "--words" : "--lengths", work, budget);
  return o;
}

}  // namespace ropesim::proofs
