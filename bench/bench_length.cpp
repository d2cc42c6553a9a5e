// Accuracy against length: the cost of `experiment length` on a compiled fp16 model
// at lengths up to 10^4, against one `attention::run` of the longest word measured in the same
// run. The experiment reads every requested length of a word from one causal pass
// (attention/prefix_oracle.hpp), so its time per word should be close to one run of that word;
// the ratio printed is (experiment seconds / words) / (one run's seconds).
//
//   build/bench/bench_length [--length 10000] [--words 2] [--formula 'Y a']
#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "attention/run.hpp"
#include "attention/transformer.hpp"
#include "logic/formula.hpp"
#include "numeric/format.hpp"
#include "numeric/stopwatch.hpp"
#include "proofs/compiler.hpp"
#include "proofs/length_experiment.hpp"

namespace {

using ropesim::numeric::Clock;
using ropesim::numeric::seconds_since;
using namespace ropesim;

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t length = 10000;
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

  fmt::print("formula '{}' in fp16 (single:g=1), longest word {}, {} words, lengths", formula,
             length, words);
  for (const auto L : spec.lengths) fmt::print(" {}", L);
  fmt::print("\n");
  fmt::print("one run of the longest word      {:.3f} s (accept {})\n", run_seconds, one.accept);
  fmt::print("experiment length                {:.3f} s ({} model, {} words: {:.3f} s per word)\n",
             experiment_seconds, series.size(), words,
             experiment_seconds / static_cast<double>(words));
  fmt::print("ratio (seconds per word / one run) {:.2f}\n",
             experiment_seconds / static_cast<double>(words) / run_seconds);
  return 0;
}
