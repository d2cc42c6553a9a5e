// `ropesim classify`: the logic class of a regular language (THEORY §5 T2, T6): the size of
// its minimal DFA and the narrowest of LTL[P], LTL[P,MOD] (with k) and none, each negative
// answer with its witness. The language comes from one source: --regex or --formula (with
// --alphabet), --dfa FILE, or --model MODEL.json (the DFA extracted from the emulated
// transformer by L*, proofs/languages/extraction.hpp); further sources plug into `language_source`
// below. For LTL[P] it also prints the C3 formula of the minimal DFA (THEORY §7 C3). Argument
// parsing and output only (STYLE): the science is in automata/.
#include <fmt/format.h>

#include <iostream>
#include <limits>
#include <memory>
#include <string>

#include "attention/transformer/model_spec.hpp"
#include "automata/classes.hpp"
#include "automata/dfa.hpp"
#include "automata/export.hpp"
#include "automata/regex.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "logic/formula.hpp"
#include "proofs/languages/language_class.hpp"

namespace ropesim::cli {

namespace {

struct ClassifyOptions {
  std::string alphabet;
  std::string regex;
  std::string dfa_file;
  std::string formula;
  std::string dot;
  std::string out;
  bool json = false;
  std::uint64_t monoid_cap = automata::kDefaultMonoidCap;
  // --model: the extraction's bounds (proofs::ExtractionOptions).
  std::string model_file;
  std::uint64_t exhaustive_length = 0;  // unset: proofs::default_exhaustive_length
  std::uint64_t random_words = 100;
  std::uint64_t random_length = 100;
  std::uint64_t seed = 1;
  std::uint64_t max_states = 256;
  ProgressChoice progress = ProgressChoice::automatic;  // --model: the extraction's model runs
  bool allow_slow = false;
};

/// Longest formula the text report prints (characters); longer ones are summarised.
constexpr std::size_t kTextFormulaChars = 2000;
/// The `formula` line of the text report ("" when there is no formula).
std::string formula_line(const nlohmann::json& formula) {
  if (formula.is_null()) return "";
  if (formula.contains("unavailable")) {
    return fmt::format("formula      none: {}\n", formula["unavailable"].get<std::string>());
  }
  const auto dag = formula["dag_nodes"].get<std::uint64_t>();
  if (formula["text"].is_string() &&
      formula["text"].get<std::string>().size() <= kTextFormulaChars) {
    return fmt::format("formula      {}   (C3, {} DAG nodes)\n", formula["text"].get<std::string>(),
                       dag);
  }
  const std::string tree = formula["tree_nodes"].is_null()
                               ? "at least 2^64"
                               : std::to_string(formula["tree_nodes"].get<std::uint64_t>());
  return fmt::format(
      "formula      C3 formula of {} DAG nodes ({} nodes as a tree): longer than {} characters, "
      "omitted from the text output ({})\n",
      dag, tree, kTextFormulaChars,
      formula["text"].is_string() ? "--json prints it" : "too large to print at all");
}

std::string text_report(const automata::Classification& c, const nlohmann::json& source,
                        const nlohmann::json& formula) {
  using automata::LanguageClass;
  std::string s;
  s +=
      fmt::format("source       {} '{}' over {}\n", source["kind"].get<std::string>(),
                  source["text"].get<std::string>(), automata::alphabet_text(c.minimal.alphabet()));
  if (source.contains("extraction")) {
    const nlohmann::json& x = source["extraction"];
    const nlohmann::json& b = x["bounds"];
    const nlohmann::json& q = x["membership_queries"];
    s += fmt::format(
        "extraction   L* (Rivest-Schapire), {} equivalence rounds, {} counterexamples{}\n",
        x["equivalence_rounds"].get<std::size_t>(), x["counterexamples"].get<std::size_t>(),
        x["state_cap_hit"].get<bool>() ? "; STATE CAP HIT: not closed, an approximation" : "");
    s += fmt::format(
        "equivalence  every word of length <= {} ({} words of length {}) and {} random words of "
        "length {} "
        "(seed {})\n",
        b["exhaustive_length"].get<std::size_t>(), x["exhaustive_words"].get<std::uint64_t>(),
        b["exhaustive_length"].get<std::size_t>(), b["random_words"].get<std::size_t>(),
        b["random_length"].get<std::size_t>(), b["seed"].get<std::uint64_t>());
    s += fmt::format(
        "queries      {} words ({} symbols), each answering all its prefixes: {} for L*, {} for "
        "equivalence\n",
        q["total"]["words"].get<std::uint64_t>(), q["total"]["symbols"].get<std::uint64_t>(),
        q["learning"]["words"].get<std::uint64_t>(),
        q["equivalence"]["words"].get<std::uint64_t>());
  }
  s += fmt::format("minimal DFA  {} states\n", c.minimal.state_count());
  s += fmt::format("class        {}", automata::to_string(c.language_class));
  if (c.language_class == LanguageClass::ltl_p_mod) s += fmt::format(" (k = {}), not LTL[P]", *c.k);
  if (c.language_class == LanguageClass::none) s += " (neither LTL[P] nor LTL[P,MOD])";
  if (source.contains("scope") && source["scope"]["certified_length"].is_number()) {
    s += fmt::format(
        " on words up to the certified length {}; beyond it the model may differ "
        "from its construction (see `ropesim run` warnings)",
        source["scope"]["certified_length"].get<std::uint64_t>());
  }
  s += "\n";
  if (c.language_class != LanguageClass::ltl_p)
    s += "witness      " + automata::witness_description(c) + "\n";
  s += formula_line(formula);
  switch (c.monoid.r_trivial) {
    case automata::Verdict::yes:
      s += fmt::format("monoid       {} elements, R-trivial\n", c.monoid.size);
      break;
    case automata::Verdict::no:
      s += fmt::format("monoid       {} elements, not R-trivial\n", c.monoid.size);
      break;
    case automata::Verdict::inconclusive:
      s += "monoid       beyond the cap (--monoid-cap): R-triviality inconclusive\n";
      break;
  }
  s += "(THEORY §5: LTL[P] iff the minimal DFA is partially ordered (T2); LTL[P,MOD] iff every "
       "strongly connected "
       "component with an internal edge is a simple cycle, k = lcm of the cycle lengths (T6)";
  s += c.definition_checked ? "; cross-checked on A_k)\n" : "; A_k too large to cross-check)\n";
  return s;
}

}  // namespace

Action add_classify_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "classify",
      "Classify a regular language: minimal DFA size and LTL[P], LTL[P,MOD] (with k) or none, "
      "with a witness (THEORY §5 T2, T6)");
  auto o = std::make_shared<ClassifyOptions>();
  cmd->add_option("--alphabet", o->alphabet,
                  "The letters, one character each (e.g. ab); needed by --regex; with "
                  "--dfa/--model it must match");
  cmd->add_option("--regex", o->regex,
                  "Regular expression: letters, . (any letter), | * + ? and parentheses; an empty "
                  "alternative or () is ε");
  cmd->add_option("--formula", o->formula,
                  "A formula of LTL[P,MOD] and neighbours (P, Y^k, S, mod(m,r); docs/LOGIC.md), "
                  "over --alphabet");
  cmd->add_option(
      "--dfa", o->dfa_file,
      "A DFA file (JSON: alphabet, states, initial, accepting, transitions; docs/CLI.md)");
  cmd->add_option("--model", o->model_file,
                  "A model file (docs/MODEL_SPEC.md): the language of the emulated transformer, "
                  "extracted by L*");
  add_integer_option(cmd, "--exhaustive-length", o->exhaustive_length,
                     "--model: compare every word up to this length (default: the largest L <= 12 "
                     "with |alphabet|^L "
                     "<= 1024)",
                     0, 64);
  add_integer_option(cmd, "--random-words", o->random_words,
                     "--model: random words compared (default 100)", 0, 1000000);
  add_integer_option(cmd, "--random-length", o->random_length,
                     "--model: length of the random words (default 100)", 0, 100000);
  add_integer_option(cmd, "--seed", o->seed, "--model: seed of the random words (default 1)", 0,
                     std::numeric_limits<std::uint64_t>::max());
  add_integer_option(cmd, "--max-states", o->max_states,
                     "--model: most states L* builds (default 256)", 1, 100000);
  add_progress_flags(cmd, o->progress);
  cmd->add_flag("--allow-slow", o->allow_slow,
                "--model: extract even when the test words' estimated time or memory exceeds the "
                "default budget "
                "(10 min, 8 GiB)");
  cmd->add_flag("--json", o->json, "Print JSON instead of text");
  cmd->add_option("--dot", o->dot, "Also write the minimal DFA to FILE (Graphviz DOT)");
  cmd->add_option("--out,-o", o->out, "Also write the JSON report (with provenance) to FILE");
  add_integer_option(
      cmd, "--monoid-cap", o->monoid_cap,
      "Most transition-monoid elements computed for the R-triviality cross-check (default 20000)",
      1, 2000000);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (cmd->count("--dot") > 0) io::check_output_path(o->dot, "--dot");
    if (cmd->count("--out") > 0) io::check_output_path(o->out, "--out");
    proofs::ClassifyArguments arguments;
    auto given = [&](const char* flag, const std::string& value) {
      return cmd->count(flag) > 0 ? std::optional<std::string>(value) : std::nullopt;
    };
    arguments.alphabet = given("--alphabet", o->alphabet);
    arguments.regex = given("--regex", o->regex);
    arguments.formula = given("--formula", o->formula);
    arguments.dfa_file = given("--dfa", o->dfa_file);
    arguments.model_file = given("--model", o->model_file);
    if (cmd->count("--exhaustive-length") > 0) arguments.exhaustive_length = o->exhaustive_length;
    arguments.random_words = o->random_words;
    arguments.random_length = o->random_length;
    arguments.seed = o->seed;
    arguments.max_states = o->max_states;
    arguments.monoid_cap = o->monoid_cap;
    arguments.allow_slow = o->allow_slow;
    arguments.warn = [](const std::string& line) {
      std::cerr << "ropesim: warning: " << line << "\n";
    };
    // --model: the extraction's model runs
    std::optional<ProgressReporter> progress;
    if (arguments.model_file) {
      progress.emplace(o->progress, "classify --model: running the model on the test words");
      arguments.progress = [&](std::uint64_t done, std::uint64_t total) {
        progress->update(done, total, "words");
      };
    }
    const proofs::LanguageClassification classified = proofs::classify_language(arguments);
    if (progress) progress->finish();
    if (classified.extraction_seconds) {
      // The timings go to stderr only: stdout and the files are the same bytes on every run.
      std::cerr << fmt::format("classify: extraction took {:.3f} s ({:.3f} s in the transformer)\n",
                               *classified.extraction_seconds, *classified.oracle_seconds);
    }
    const automata::Classification& c = classified.classification;
    const nlohmann::json& source = classified.source;
    const nlohmann::json report = proofs::to_json(classified);
    if (cmd->count("--dot") > 0)
      io::write_output_file(o->dot, "// " + provenance_line() + "\n" + automata::to_dot(c.minimal),
                            "--dot");
    if (cmd->count("--out") > 0) {
      nlohmann::json file = report;
      file["provenance"] = provenance();
      io::write_output_file(o->out, file.dump(2) + "\n");
    }
    if (o->json) {
      std::cout << report.dump(2) << "\n";
    } else {
      std::cout << text_report(c, source, report["formula"]);
    }
    return 0;
  };
}

}  // namespace ropesim::cli
