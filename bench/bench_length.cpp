// Accuracy against length: the cost of `experiment length` on a compiled fp16 model at the
// lengths 10, 100, ..., --length, against one `attention::run` of a word of the longest length
// measured in the same run. The experiment draws its own members and non-members at every
// length and runs each word once with a single EOS query (attention::PrefixOracle::output,
// about half a run()); the longest length dominates. The ratio printed is (experiment seconds)
// / (one run's seconds × the words of the experiment weighted by (L / longest)², i.e. the
// runs of the longest word that the same work would be).
//
//   build/bench/bench_length [--length 2000] [--words 2] [--formula 'Y a']
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/stopwatch.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/experiments/length_experiment.hpp"

namespace {

using ropesim::Clock;
using ropesim::seconds_since;
using namespace ropesim;

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t length = 2000;
  std::size_t words = 2;
  std::string formula = "Y a";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--length") == 0) length = std::stoull(argv[i + 1]);
    if (std::strcmp(argv[i], "--words") == 0) words = std::stoull(argv[i + 1]);
    if (std::strcmp(argv[i], "--formula") == 0) formula = argv[i + 1];
  }
  proofs::LengthExperimentSpec spec;
  spec.formula = formula;
  spec.alphabet = {"a", "b"};
  spec.schedules = {attention::single_schedule(1)};
  spec.formats = {numeric::Format::fp16()};
  for (std::uint64_t L = 10; L < length; L *= 10) spec.lengths.push_back(L);
  spec.lengths.push_back(length);
  spec.words = words;

  // The reference: one run of one word of the longest length.
  proofs::CompileOptions options;
  options.policy.format = numeric::Format::fp16();
  const auto compiled = proofs::compile(ltl::parse(formula), spec.alphabet, options);
  std::mt19937_64 rng(1);
  std::string word(length, 'a');
  for (char& c : word) c = rng() % 2 ? 'a' : 'b';
  auto start = Clock::now();
  const auto one = attention::run(compiled.model, word);
  const double run_seconds = seconds_since(start);

  start = Clock::now();
  const auto series = proofs::length_experiment(spec);
  const double experiment_seconds = seconds_since(start);

  // The words run: per length, members + non-members + offset-aliasing words.
  double equivalent_runs = 0;
  std::size_t word_count = 0;
  for (const auto& row : series.front().rows) {
    const double scale = double(row.length) / double(length);
    equivalent_runs += double(row.words()) * scale * scale;
    word_count += row.words();
  }
  fmt::print("formula '{}' in fp16 (single:g=1), longest word {}, --words {}, lengths", formula,
             length, words);
  for (const auto L : spec.lengths) fmt::print(" {}", L);
  fmt::print("\n");
  fmt::print("one run of the longest word        {:.3f} s (accept {})\n", run_seconds, one.accept);
  fmt::print(
      "experiment length                  {:.3f} s ({} words, {:.2f} longest-word runs of work)\n",
      experiment_seconds, word_count, equivalent_runs);
  fmt::print("ratio (seconds / (runs of work × one run)) {:.2f}\n",
             experiment_seconds / (equivalent_runs * run_seconds));
  return 0;
}
