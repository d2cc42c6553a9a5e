// `ropesim rotate`: the realised score ⟨R̂_p q, R̂_{p-n} k⟩ in F next to the exact qᵀR_{-n}k,
// and its drift with p at fixed n (attention/fidelity/rotate.hpp). Parsing and printing only.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "attention/fidelity/rotate.hpp"
#include "attention/realisations/framework_presets.hpp"
#include "cli/commands.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"

namespace ropesim::cli {

namespace {

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return fmt::format("{:.6g}", v);
}

std::string vector_text(const std::vector<numeric::Value>& v) {
  constexpr std::size_t kShown = 16;  // longer vectors: the first 8, then a count
  std::string out;
  const std::size_t shown = v.size() <= kShown ? v.size() : 8;
  for (std::size_t j = 0; j < shown; ++j) out += (j ? " " : "") + v[j].to_decimal(9);
  if (shown < v.size()) out += fmt::format(" ... ({} values; --json lists all)", v.size());
  return out;
}

std::vector<numeric::Value> parse_vector(const std::string& text, const std::string& flag,
                                         const numeric::Format& f) {
  std::vector<numeric::Value> out;
  for (const auto& item : split_list(text, flag, ListKind::plain, ropesim::Repeats::allowed)) {
    const mpq_class q =
        with_context(flag, [&] { return numeric::parse_decimal_exact(item, "vector value"); });
    out.push_back(numeric::mpfr_engine().from_rational(f, q, numeric::Rounding::nearest_even));
  }
  return out;
}

std::vector<std::uint64_t> parse_positions(const std::string& text) {
  std::vector<std::uint64_t> out;
  for (const auto& item : split_list(text, "--positions")) {  // no empty item, each once
    out.push_back(ropesim::parse_integer(item, "--positions", 0, INT64_MAX));
  }
  return out;
}

/// The score's summation, its accumulator and where the choice comes from.
struct ScoreSummation {
  numeric::Summation summation = numeric::Summation::sequential;
  numeric::Format accumulator = numeric::Format::fp32();
  std::string origin;
};

/// The score's accumulation: --summation, else the framework preset's (fp32 GEMM
/// accumulation), else sequential in F (THEORY §2.1's canonical order); --accumulator only
/// with wide-accumulator.
ScoreSummation choose_summation(const attention::Realisation& r,
                                const std::optional<numeric::Summation>& summation_flag,
                                const std::string& accumulator_text) {
  const attention::ScoreAccumulation* preset_accumulation =
      attention::framework_score_accumulation(r.name());
  ScoreSummation c;
  c.origin = "sequential in F: THEORY §2.1's canonical order (--summation to change)";
  if (summation_flag) {
    c.summation = *summation_flag;
    c.origin = "--summation";
  } else if (preset_accumulation) {
    c.summation = numeric::Summation::wide_accumulator;
    c.accumulator = numeric::parse_format(preset_accumulation->format);
    c.origin = fmt::format("{}'s accumulation: its q·k GEMM accumulates in {} (docs/FRAMEWORKS.md)",
                           r.name(), preset_accumulation->format);
  }
  if (!accumulator_text.empty()) {
    if (c.summation != numeric::Summation::wide_accumulator) {
      throw InvalidArgument(
          "--accumulator: only --summation wide-accumulator has an accumulator; accepted: "
          "--accumulator with --summation wide-accumulator (or a framework preset)");
    }
    c.accumulator =
        with_context("--accumulator", [&] { return numeric::parse_format(accumulator_text); });
  }
  return c;
}

/// The readable report of `rotate`.
std::string rotate_text(const attention::RotateResult& result, const attention::Schedule& schedule,
                        numeric::Rounding mode, const std::string& summation_origin) {
  std::string out;
  out += fmt::format("schedule     {}\n", result.schedule);
  out += fmt::format("realization  {} (format {}, layout {}, rounding {})\n", result.realisation,
                     result.format.name, attention::to_string(result.layout),
                     numeric::to_string(mode));
  out += fmt::format("q            {}\n", vector_text(result.query));
  out += fmt::format("k            {}\n", vector_text(result.key));
  const std::string accumulation = result.summation == numeric::Summation::wide_accumulator
                                       ? fmt::format(" (accumulator {})", result.accumulator.name)
                                       : "";
  out += fmt::format(
      "score        <R^_p q, R^_(p-n) k> in {}, summation {}{} over coordinates 0..{}\n",
      result.format.name, numeric::to_string(result.summation), accumulation,
      schedule.dimension() - 1);
  out += fmt::format("accumulation {}\n", summation_origin);
  if (result.attention_factor) {
    out += fmt::format(
        "exact        s^2 q R_(-n) k = {} (n = {}; the same at every p; s = {:.6g} is the "
        "attention factor {} multiplies cos and sin by, so both sides carry s^2)\n",
        number_text(result.exact), result.offset, result.attention_factor->get_d(),
        result.realisation);
  } else {
    out += fmt::format("exact        q R_(-n) k = {} (n = {}; the same at every p)\n",
                       number_text(result.exact), result.offset);
  }
  Table t;
  t.columns = {"p", "p-n", "realised score", "abs error", "rel error", "flags"};
  for (const auto& s : result.scores) {
    t.rows.push_back({s.position, s.key_position, s.score.to_decimal(9),
                      number_text(s.absolute_error), number_text(s.relative_error),
                      flags_text(s.flags)});
  }
  out += t.to_text();
  out += fmt::format("drift        max - min of the realised score over {} position{}: {}\n",
                     result.scores.size(), result.scores.size() == 1 ? "" : "s",
                     number_text(result.drift));
  return out;
}

}  // namespace

namespace {

struct RotateOptions {
  std::string schedule, realisation = "r1", format = "fp32", rounding = "nearest-even",
                        engine = "auto", q, k, positions, summation = "auto", accumulator, out;
  std::optional<std::uint64_t> seed, position;
  std::uint64_t offset = 0;
  bool json = false;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_rotate_options(CLI::App& app, RotateOptions* o) {
  auto* cmd =
      app.add_subcommand("rotate",
                         "Realised score <R^_p q, R^_(p-n) k> in F next to the exact q R_(-n) k, "
                         "and its drift with p at fixed offset n");
  cmd->add_option("--schedule", o->schedule, "Schedule spec or model preset")->required();
  cmd->add_option("--realization,--realisation", o->realisation,
                  "r1 r2 r3 hf llamacpp-cpu llamacpp-cuda pipeline:...")
      ->capture_default_str();
  cmd->add_option("--format", o->format,
                  "Number format F (r1-r3) or activation format (pipelines): q, k and the score")
      ->capture_default_str();
  cmd->add_option("--rounding", o->rounding, "Rounding of every step")->capture_default_str();
  cmd->add_option("--engine", o->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  auto* q = cmd->add_option(
      "--q", o->q, "Query vector: D comma-separated decimals, each rounded to nearest-even into F");
  auto* k = cmd->add_option(
      "--k", o->k, "Key vector: D comma-separated decimals, each rounded to nearest-even into F");
  auto* seed = add_integer_option(
      cmd, "--seed", o->seed,
      "Random q and k: multiples of 1/64 in [-1, 1] from std::mt19937_64(seed)", 0, UINT64_MAX);
  auto* position = add_integer_option(cmd, "--position", o->position,
                                      "Query position p (key at p - n)", 0, INT64_MAX);
  auto* positions = cmd->add_option("--positions", o->positions,
                                    "Several query positions p (comma list): the drift with p");
  add_integer_option(cmd, "--offset", o->offset, "n: the key sits at p - n", 0, INT64_MAX)
      ->required();
  cmd->add_option("--summation", o->summation,
                  "Summation of the score: auto sequential pairwise wide-accumulator exact (auto: "
                  "a framework preset's "
                  "own accumulation, wide-accumulator in fp32 as its GPU matmul; sequential in F "
                  "for r1 r2 r3 and "
                  "pipeline:...)")
      ->capture_default_str();
  cmd->add_option(
      "--accumulator", o->accumulator,
      "Accumulator format of --summation wide-accumulator (default: the preset's, else fp32)");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->add_option("-o,--out", o->out, "Also write the JSON (with provenance) to FILE.json");
  seed->excludes(q);
  seed->excludes(k);
  position->excludes(positions);
  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_rotate(const CLI::App& cmd, RotateOptions& o) {
  if (cmd.count("--out") > 0) {
    (void)output_kind_for(o.out, "--out", {OutputKind::json});  // writes JSON only
    io::check_output_path(o.out, "--out");
  }
  if (cmd.count("--seed") == 0 && (cmd.count("--q") == 0 || cmd.count("--k") == 0)) {
    throw InvalidArgument(
        "rotate: give the vectors with --q LIST and --k LIST, or --seed N for random ones");
  }
  if (cmd.count("--position") == 0 && cmd.count("--positions") == 0) {
    throw InvalidArgument("rotate: give the query position with --position P or --positions LIST");
  }
  const auto mode = with_context("--rounding", [&] { return numeric::parse_rounding(o.rounding); });
  const auto format = with_context("--format", [&] { return numeric::parse_format(o.format); });
  std::optional<numeric::Summation> summation_flag;
  if (o.summation != "auto") {
    summation_flag =
        with_context("--summation", [&] { return numeric::parse_summation(o.summation); });
  }
  const auto schedule =
      with_context("--schedule", [&] { return attention::parse_schedule(o.schedule); });
  const numeric::Engine* engine =
      with_context("--engine", [&] { return &numeric::engine_by_name(o.engine); });
  const numeric::FormatBinding binding{format, mode, engine};
  auto r = with_context("--realization",
                        [&] { return attention::parse_realisation(o.realisation, binding); });
  with_context("--realization", [&] {
    attention::check_applicable(schedule, r);
    return 0;
  });
  const ScoreSummation chosen = choose_summation(r, summation_flag, o.accumulator);
  const numeric::Summation summation = chosen.summation;
  const numeric::Format& accumulator = chosen.accumulator;
  const std::string& summation_origin = chosen.origin;
  attention::QueryKey qk;
  if (o.seed) {
    qk = attention::random_query_key(format, schedule.dimension(), *o.seed);
  } else {
    qk.query = parse_vector(o.q, "--q", format);
    qk.key = parse_vector(o.k, "--k", format);
    for (const auto& [flag, v] : {std::pair{"--q", &qk.query}, std::pair{"--k", &qk.key}}) {
      if (v->size() != schedule.dimension()) {
        throw InvalidArgument(fmt::format(
            "{}: {} values, but '{}' has dimension {}; accepted: {} comma-separated values", flag,
            v->size(), schedule.spec, schedule.dimension(), schedule.dimension()));
      }
    }
  }
  const std::vector<std::uint64_t> ps =
      o.position ? std::vector<std::uint64_t>{*o.position} : parse_positions(o.positions);
  if (ps.empty())
    throw InvalidArgument("--positions: empty list; accepted: integers, e.g. 100,1000,10000");
  warn_about_schedule(schedule, *std::max_element(ps.begin(), ps.end()));
  const auto result = with_context(o.position ? "--position" : "--positions", [&] {
    return attention::rotate_scores(schedule, r, qk.query, qk.key, o.offset, ps, summation,
                                    accumulator);
  });
  nlohmann::json j = attention::to_json(result);
  j["rounding"] = std::string(numeric::to_string(mode));
  j["summation_origin"] = summation_origin;
  if (o.seed) j["seed"] = *o.seed;
  if (!o.out.empty()) {
    nlohmann::json file = j;
    file["provenance"] = provenance();
    io::write_output_file(o.out, file.dump(2) + "\n");
  }
  if (o.json) {
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << rotate_text(result, schedule, mode, summation_origin);
  return 0;
}

}  // namespace

Action add_rotate_command(CLI::App& app) {
  auto o = std::make_shared<RotateOptions>();
  CLI::App* cmd = add_rotate_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_rotate(*cmd, *o);
  };
}

}  // namespace ropesim::cli
