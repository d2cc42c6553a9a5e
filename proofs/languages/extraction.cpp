// L* with Rivest–Schapire counterexamples and a bounded equivalence test (see extraction.hpp).
#include "proofs/languages/extraction.hpp"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <utility>

#include "attention/transformer/prefix_oracle.hpp"
#include "automata/minimise.hpp"
#include "core/error.hpp"

namespace ropesim::proofs {

namespace {

using automata::Word;
using Clock = std::chrono::steady_clock;

Word concat(const Word& u, const Word& v) {
  Word w = u;
  w.insert(w.end(), v.begin(), v.end());
  return w;
}

/// The oracle with its answers cached and its calls counted.
class Teacher {
 public:
  Teacher(const MembershipOracle& oracle, Extraction& result) : oracle_(oracle), result_(result) {}

  /// All prefix answers of w from the oracle (counted as an equivalence or learning query).
  std::vector<bool> ask_all(const Word& w, bool equivalence) {
    const auto t0 = Clock::now();
    std::vector<bool> answers = oracle_(w);
    result_.oracle_seconds += std::chrono::duration<double>(Clock::now() - t0).count();
    if (answers.size() != w.size() + 1) {
      throw InvalidArgument("membership oracle: " + std::to_string(answers.size()) +
                            " answers for a word of " + std::to_string(w.size()) +
                            " letters; expected one per prefix (" + std::to_string(w.size() + 1) +
                            ")");
    }
    (equivalence ? result_.equivalence_queries : result_.learning_queries) += 1;
    (equivalence ? result_.equivalence_symbols : result_.learning_symbols) += w.size();
    return answers;
  }

  /// w ∈ L, from the cache or one oracle call that fills the cache with all prefixes of w.
  bool member(const Word& w) {
    const auto it = cache_.find(w);
    if (it != cache_.end()) return it->second;
    const std::vector<bool> answers = ask_all(w, false);
    Word prefix;
    for (std::size_t n = 0; n <= w.size(); ++n) {
      cache_.emplace(prefix, answers[n]);
      if (n < w.size()) prefix.push_back(w[n]);
    }
    return answers.back();
  }

 private:
  const MembershipOracle& oracle_;
  Extraction& result_;
  std::map<Word, bool> cache_;
};

/// Angluin's observation table: access strings S (pairwise distinct rows), suffixes E (ε
/// first), rows over E for every word of S ∪ S·Σ.
class ObservationTable {
 public:
  ObservationTable(Teacher& teacher, std::size_t letters) : teacher_(teacher), letters_(letters) {
    suffixes_.push_back({});
    add_access({});
  }

  const std::vector<Word>& access() const { return access_; }

  /// Adds a distinguishing suffix. Throws InvalidArgument if it is already present: with a
  /// closed table that happens only if the oracle answered one word two ways.
  void add_suffix(const Word& e) {
    if (std::find(suffixes_.begin(), suffixes_.end(), e) != suffixes_.end()) {
      throw InvalidArgument(
          "membership oracle: answered the same word differently on two calls; accepted: a "
          "deterministic oracle");
    }
    suffixes_.push_back(e);
    for (auto& [u, row] : rows_) row.push_back(teacher_.member(concat(u, e)));
    row_index_.clear();
    for (std::size_t s = 0; s < access_.size(); ++s) row_index_.emplace(rows_.at(access_[s]), s);
  }

  /// Closes the table: adds every s·a whose row is new as an access string, up to max_states
  /// access strings. Returns false if the cap stopped it.
  bool close(std::size_t max_states) {
    for (std::size_t s = 0; s < access_.size(); ++s) {
      for (std::size_t a = 0; a < letters_; ++a) {
        Word u = access_[s];
        u.push_back(a);
        if (row_index_.count(row(u)) == 0) {
          if (access_.size() >= max_states) return false;
          add_access(u);
        }
      }
    }
    return true;
  }

  /// The hypothesis: states = access strings; δ(s, a) = the access string with the row of
  /// s·a (when the cap left the table open: the one agreeing on the most suffixes); final iff
  /// the row's ε entry is set.
  automata::Dfa hypothesis(const std::vector<std::string>& alphabet) {
    std::vector<std::vector<automata::State>> delta(access_.size(),
                                                    std::vector<automata::State>(letters_));
    std::vector<bool> accepting(access_.size());
    for (std::size_t s = 0; s < access_.size(); ++s) {
      accepting[s] = rows_.at(access_[s])[0];
      for (std::size_t a = 0; a < letters_; ++a) {
        Word u = access_[s];
        u.push_back(a);
        delta[s][a] = state_of_row(row(u));
      }
    }
    return automata::Dfa(alphabet, std::move(delta), 0, std::move(accepting));
  }

 private:
  const std::vector<bool>& row(const Word& u) {
    auto it = rows_.find(u);
    if (it == rows_.end()) {
      std::vector<bool> r;
      r.reserve(suffixes_.size());
      for (const Word& e : suffixes_) r.push_back(teacher_.member(concat(u, e)));
      it = rows_.emplace(u, std::move(r)).first;
    }
    return it->second;
  }

  void add_access(const Word& u) {
    access_.push_back(u);
    row_index_.emplace(row(u), access_.size() - 1);
  }

  std::size_t state_of_row(const std::vector<bool>& r) const {
    const auto it = row_index_.find(r);
    if (it != row_index_.end()) return it->second;
    std::size_t best = 0, best_agree = 0;
    for (std::size_t s = 0; s < access_.size(); ++s) {
      const std::vector<bool>& other = rows_.at(access_[s]);
      std::size_t agree = 0;
      for (std::size_t k = 0; k < r.size(); ++k) agree += r[k] == other[k] ? 1 : 0;
      if (agree > best_agree) best = s, best_agree = agree;
    }
    return best;
  }

  Teacher& teacher_;
  std::size_t letters_;
  std::vector<Word> access_;
  std::vector<Word> suffixes_;
  std::map<Word, std::vector<bool>> rows_;
  std::map<std::vector<bool>, std::size_t> row_index_;
};

/// A word of the test set with the oracle's answer on each of its prefixes.
struct TestWord {
  Word word;
  std::vector<bool> answers;
};

/// The shortest prefix of a test word on which `hypothesis` and the oracle disagree, over the
/// whole test set (ties: the first word), or an empty optional.
std::optional<Word> find_counterexample(const automata::Dfa& hypothesis,
                                        const std::vector<TestWord>& tests) {
  std::optional<Word> best;
  for (const TestWord& t : tests) {
    automata::State q = hypothesis.initial();
    const std::size_t limit = best ? std::min(best->size(), t.word.size() + 1) : t.word.size() + 1;
    for (std::size_t n = 0; n < limit; ++n) {
      if (n > 0) q = hypothesis.next(q, t.word[n - 1]);
      if (hypothesis.accepting(q) != t.answers[n]) {
        best = Word(t.word.begin(), t.word.begin() + static_cast<std::ptrdiff_t>(n));
        break;
      }
    }
  }
  return best;
}

/// The suffix Rivest–Schapire's binary search finds for counterexample w (see the header).
Word rivest_schapire_suffix(Teacher& teacher, const automata::Dfa& hypothesis,
                            const std::vector<Word>& access, const Word& w) {
  // α(i) = member(⌊w_1..w_i⌋ · w_{i+1}..w_m).
  auto alpha = [&](std::size_t i) {
    const automata::State q = hypothesis.run(
        hypothesis.initial(), Word(w.begin(), w.begin() + static_cast<std::ptrdiff_t>(i)));
    return teacher.member(
        concat(access[q], Word(w.begin() + static_cast<std::ptrdiff_t>(i), w.end())));
  };
  const bool alpha0 = alpha(0);
  std::size_t lo = 0, hi = w.size();  // α(lo) = α(0) ≠ α(hi)
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (alpha(mid) == alpha0 ? lo : hi) = mid;
  }
  return Word(w.begin() + static_cast<std::ptrdiff_t>(hi), w.end());
}

/// The equivalence test set: every word of length exhaustive_length (length-lexicographic;
/// `exhaustive` = k^L of them), then random_words random words of length random_length.
std::vector<TestWord> test_set(Teacher& teacher, std::size_t k, const ExtractionOptions& options,
                               std::uint64_t exhaustive) {
  std::vector<TestWord> tests;
  Word w(options.exhaustive_length, 0);
  const std::uint64_t total = exhaustive + (options.random_length > 0 ? options.random_words : 0);
  for (std::uint64_t i = 0; i < exhaustive; ++i) {
    if (options.progress && (i & 15) == 0) options.progress(i, total);
    std::uint64_t rest = i;
    for (std::size_t p = options.exhaustive_length; p-- > 0;) {
      w[p] = static_cast<automata::Letter>(rest % k);
      rest /= k;
    }
    tests.push_back({w, teacher.ask_all(w, true)});
  }
  std::mt19937_64 rng(options.seed);
  if (options.random_length > 0) {
    for (std::size_t r = 0; r < options.random_words; ++r) {
      Word u(options.random_length);
      for (auto& a : u) a = static_cast<automata::Letter>(rng() % k);
      tests.push_back({u, teacher.ask_all(u, true)});
      if (options.progress) options.progress(exhaustive + r + 1, total);
    }
  }
  if (options.progress) options.progress(total, total);
  return tests;
}

/// k^L, or throws InvalidArgument when it exceeds kMaxExhaustiveWords.
std::uint64_t exhaustive_words(std::size_t k, std::size_t length) {
  std::uint64_t exhaustive = 1;
  for (std::size_t n = 0; n < length; ++n) {
    exhaustive *= k;
    if (exhaustive > kMaxExhaustiveWords) {
      throw InvalidArgument("extraction: exhaustive length " + std::to_string(length) + " over " +
                            std::to_string(k) + " letters needs more than " +
                            std::to_string(kMaxExhaustiveWords) +
                            " words; accepted: a length with |alphabet|^length <= " +
                            std::to_string(kMaxExhaustiveWords));
    }
  }
  return exhaustive;
}

}  // namespace

Extraction extract_automaton(const MembershipOracle& oracle,
                             const std::vector<std::string>& alphabet,
                             const ExtractionOptions& options) {
  const auto t0 = Clock::now();
  if (alphabet.empty())
    throw InvalidArgument(
        "extraction: the alphabet is empty; accepted: one or more distinct symbols");
  if (std::set<std::string>(alphabet.begin(), alphabet.end()).size() != alphabet.size()) {
    throw InvalidArgument("extraction: the alphabet " + automata::alphabet_text(alphabet) +
                          " repeats a symbol; accepted: distinct symbols");
  }
  if (options.max_states == 0)
    throw InvalidArgument("extraction: max_states = 0; accepted: 1 or more");
  const std::size_t k = alphabet.size();
  const std::uint64_t exhaustive = exhaustive_words(k, options.exhaustive_length);
  Extraction result{automata::Dfa(alphabet, {std::vector<automata::State>(k, 0)}, 0, {false}),
                    options};
  result.exhaustive_words = exhaustive;
  result.bounds.progress = nullptr;  // the caller's callback is not kept in the result
  Teacher teacher(oracle, result);

  // The equivalence test set, answered once and compared with every hypothesis.
  const std::vector<TestWord> tests = test_set(teacher, k, options, exhaustive);

  ObservationTable table(teacher, k);
  for (;;) {
    const bool closed = table.close(options.max_states);
    automata::Dfa hypothesis = table.hypothesis(alphabet);
    if (!closed) {
      result.state_cap_hit = true;
      result.dfa = automata::minimise(hypothesis);
      break;
    }
    ++result.equivalence_rounds;
    const std::optional<Word> counterexample = find_counterexample(hypothesis, tests);
    if (!counterexample) {
      result.dfa = automata::minimise(hypothesis);
      break;
    }
    ++result.counterexamples;
    table.add_suffix(rivest_schapire_suffix(teacher, hypothesis, table.access(), *counterexample));
  }
  result.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return result;
}

std::optional<automata::Word> find_disagreement(const automata::Dfa& dfa,
                                                const MembershipOracle& oracle,
                                                const ExtractionOptions& bounds) {
  Extraction counts{dfa, bounds};
  Teacher teacher(oracle, counts);
  const std::size_t k = dfa.letter_count();
  return find_counterexample(
      dfa, test_set(teacher, k, bounds, exhaustive_words(k, bounds.exhaustive_length)));
}

WorkEstimate extraction_work(const attention::Model& model, const ExtractionOptions& options) {
  const double letters = static_cast<double>(model.embedding.alphabet.size());
  double exhaustive = 1;
  for (std::size_t n = 0;
       n < options.exhaustive_length && exhaustive <= static_cast<double>(kMaxExhaustiveWords);
       ++n) {
    exhaustive *= letters;
  }
  exhaustive = std::min(exhaustive, static_cast<double>(kMaxExhaustiveWords) + 1);
  const double random = options.random_length > 0 ? static_cast<double>(options.random_words) : 0;
  const WorkEstimate short_run = attention::run_work(model, options.exhaustive_length);
  const WorkEstimate long_run = attention::run_work(model, options.random_length);
  WorkEstimate e;
  e.what = "multiply-adds in F (the equivalence test words)";
  e.units = exhaustive * short_run.units + random * long_run.units;
  // measured: one word of 20000 letters through the fp16 model of P a (8e8 multiply-adds by
  // run_work) in 43 s: the prefix oracle is about 4x faster per multiply-add than run().
  e.units_per_second = 2e7;
  e.bytes = (exhaustive * static_cast<double>(options.exhaustive_length + 1) +
             random * static_cast<double>(options.random_length + 1)) *
                static_cast<double>(sizeof(automata::Letter) + 1) +
            std::max(short_run.bytes, long_run.bytes);
  return e;
}

std::size_t default_exhaustive_length(std::size_t letters) {
  std::size_t length = 0;
  std::uint64_t words = 1;
  while (length < 12 && words * letters <= 1024) {
    words *= letters;
    ++length;
  }
  return length;
}

MembershipOracle model_oracle(const attention::Model& model) {
  auto oracle = std::make_shared<attention::PrefixOracle>(model);
  return [oracle](const Word& w) {
    return oracle->run(std::span<const std::size_t>(w.data(), w.size())).accept;
  };
}

Extraction extract_automaton(const attention::Model& model, const ExtractionOptions& options) {
  return extract_automaton(model_oracle(model), model.embedding.alphabet, options);
}

nlohmann::json to_json(const Extraction& e) {
  const ExtractionOptions& b = e.bounds;
  return {{"bounds",
           {{"exhaustive_length", b.exhaustive_length},
            {"random_words", b.random_words},
            {"random_length", b.random_length},
            {"seed", b.seed},
            {"max_states", b.max_states}}},
          {"state_cap_hit", e.state_cap_hit},
          {"equivalence_rounds", e.equivalence_rounds},
          {"counterexamples", e.counterexamples},
          {"membership_queries",
           {{"learning", {{"words", e.learning_queries}, {"symbols", e.learning_symbols}}},
            {"equivalence", {{"words", e.equivalence_queries}, {"symbols", e.equivalence_symbols}}},
            {"total",
             {{"words", e.learning_queries + e.equivalence_queries},
              {"symbols", e.learning_symbols + e.equivalence_symbols}}}}},
          {"exhaustive_words", e.exhaustive_words},
          {"seconds", e.seconds},
          {"oracle_seconds", e.oracle_seconds}};
}

}  // namespace ropesim::proofs
