// `ropesim construct`: compile a construction of THEORY §7 into a model spec that `ropesim run`
// runs and explains.
//   construct mod     the MOD_m^r atom with RoPE_P (C4; RoPE-X App C.3): the chosen C, the
//                     exact-arithmetic bound 2·f_large/δ_m and the realised margin of every
//                     query residue (proofs/compiler/mod_atom.hpp)
//   construct offset  the Y^k π_a transformer (C5; RoPE-X App D) that
//   proofs/experiments/offset_simulation
//                     builds, with C given or chosen by the horizon's C = auto
// Argument parsing and output only (STYLE): the science is in proofs/.
#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <string>

#include "attention/transformer/model_spec.hpp"
#include "cli/commands.hpp"
#include "cli/horizon_common.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/format_properties.hpp"
#include "proofs/compiler/mod_atom.hpp"
#include "proofs/experiments/offset_simulation.hpp"
#include "proofs/range/horizon.hpp"

namespace ropesim::cli {

namespace {

/// A value for text output: 9 significant digits (exact for short values; JSON has them exactly).
std::string number(const numeric::Value& v) { return fmt::format("{:.9g}", v.to_double()); }

/// The model spec with the construction report under "_construction" (ignored by readers).
void write_model(const std::string& path, const attention::Model& model,
                 const nlohmann::json& report) {
  nlohmann::json spec = attention::model_to_json(model);
  spec["_construction"] = report;
  spec["_provenance"] = provenance();
  write_model_spec(path, spec);
}

/// The readable report of `construct mod`: the construction, f_large, the bound, C, the realised
/// parameters and one row per query residue (at most 24, plus the smallest lead).
std::string mod_text(const proofs::ModModel& built, const proofs::ModModelSpec& spec,
                     const std::string& out) {
  const auto& p = spec.atom.policy;
  std::string s;
  s += fmt::format(
      "construct  {}: {} in {} ({})\n", built.model.name,
      spec.readout == proofs::ModReadout::length
          ? fmt::format("the atom MOD_{}^{} read at EOS = N+1", spec.atom.m, built.atom_residue)
          : std::string("the atom read at EOS = N+1"),
      p.format.name, numeric::to_string(p.rounding));
  if (built.bounded) {
    const auto& h = *built.bounded;
    s += fmt::format(
        "source     THEORY §7 C4': the residue test on block {} of {} (r1: theta = {:.8g} rad "
        "per position), the turn 2*pi*{}/{} it approximates, epsilon = {:.6g} rad\n",
        h.block, h.schedule, h.theta, h.a, h.m, h.epsilon);
    s += fmt::format("f_large    {}\n", number(h.f_large));
    s += fmt::format("C          {}{}\n", number(h.C),
                     h.auto_C ? fmt::format("  (auto: the longest range over {} (block, C) tried)",
                                            h.candidates.size())
                              : std::string("  (given)"));
    s += fmt::format(
        "query bias ({}, {}) on the block, (1, 0) on the baseline pair   b = "
        "cos(pi/m) = {}   key weight C*b = {}\n",
        number(h.query_cos), number(h.query_sin), number(h.b), number(h.key_weight));
    s += fmt::format("range      N_max^MOD = {}{}: every query 2..{} leads by >= f_large\n",
                     h.n_max, h.at_limit ? " (the scan's limit)" : "", h.n_max + 1);
    if (h.fail_query) {
      s += fmt::format("fails at   query {}: BOS score {}, other score {} ({} should win)\n",
                       *h.fail_query, number(h.fail_bos_score), number(h.fail_other_score),
                       *h.fail_query % h.m == h.r ? "BOS" : "the other keys");
    }
    if (h.drift_bound >= 0) {
      s += fmt::format(
          "drift      exact-arithmetic estimate (L+1)*|epsilon| <= pi/m - eta: L <= {}\n",
          std::isfinite(h.drift_bound) ? fmt::format("{:.0f}", h.drift_bound)
                                       : std::string("any (epsilon = 0)"));
    }
    s += fmt::format("certified  words of length <= {} (beyond, the model may err)\n", h.n_max);
  } else if (!built.atom) {
    s += "head       none: MOD_1^0 is top (THEORY §7 C4), the model accepts every word\n";
  } else {
    const auto& h = *built.atom;
    s += fmt::format(
        "source     THEORY §7 C4, RoPE-X App C.3: r3 table of periodic 1/{}, one unrotated pair\n",
        h.m);
    s += fmt::format("f_large    {}\n", number(h.f_large));
    s += fmt::format("bound      2*f_large/delta_m ~ {:.8g} ({}), rounded up into F: {}\n",
                     h.bound.approximate,
                     h.bound.exact ? "exactly " + numeric::exact_decimal(*h.bound.exact)
                                   : std::string("irrational"),
                     number(h.bound.rounded_up));
    s += fmt::format(
        "C          {}{}\n", number(h.C),
        h.auto_C ? fmt::format("  (auto: candidate {} from the bound, step x(1+1/16) rounded up)",
                               h.candidates.size())
                 : std::string("  (given)"));
    s += fmt::format("query bias ({}, {}, 1, 0)   b_m = {}   key weight C*b_m = {}\n",
                     number(h.query_cos), number(h.query_sin), number(h.b), number(h.key_weight));
    s += "residue  winner  BOS score      other score    margin (exact)       >= f_large\n";
    // At most 24 rows in text (JSON has every residue); the smallest lead is always shown.
    constexpr std::size_t shown = 24;
    std::size_t smallest = 0;
    for (std::size_t k = 0; k < h.margins.size(); ++k) {
      if (h.margins[k].margin && *h.margins[k].margin == h.min_margin) {
        smallest = k;
        break;
      }
    }
    auto row = [&](const proofs::ResidueMargin& rm) {
      s += fmt::format("{:<8} {:<7} {:<14} {:<14} {:<20} {}\n", rm.residue,
                       rm.bos_wins ? "BOS" : "other", number(rm.bos_score),
                       number(rm.bos_wins ? rm.other_max : rm.other_min),
                       rm.margin ? numeric::exact_decimal(*rm.margin) : std::string("not finite"),
                       rm.passes ? "yes" : "no");
    };
    for (std::size_t k = 0; k < h.margins.size() && k < shown; ++k) row(h.margins[k]);
    if (h.margins.size() > shown) {
      s += fmt::format("...      ({} more residues; --json lists all){}\n",
                       h.margins.size() - shown, smallest >= shown ? "; the smallest lead:" : "");
      if (smallest >= shown) row(h.margins[smallest]);
    }
    s += fmt::format(
        "margin     smallest {} >= f_large {}: softmax selects exactly in every residue\n",
        numeric::exact_decimal(h.min_margin), number(h.f_large));
  }
  if (!out.empty()) {
    s += fmt::format("model      written to {} (explain it: ropesim run {} --input WORD --trace)\n",
                     out, out);
  }
  return s;
}

}  // namespace

namespace {

struct ModOptions {
  std::string m, r, format = "fp32", C = "auto", rounding = "nearest-even", readout = "length", out,
                    engine = "auto", schedule;
  bool json = false;
};
struct OffsetOptions {
  HeadArguments head;
  std::string out;
  bool json = false;
};

/// `construct mod` with options `mo` (`mod` tells which flags were given): the MOD_m^r model.
int run_construct_mod(const CLI::App& mod, ModOptions& mo) {
  proofs::ModModelSpec spec;
  auto& policy = spec.atom.policy;
  policy.rounding =
      with_context("--rounding", [&] { return numeric::parse_rounding(mo.rounding); });
  policy.format = with_context("--format", [&] { return numeric::parse_format(mo.format); });
  policy.engine = with_context("--engine", [&] { return &numeric::engine_by_name(mo.engine); });
  // m ≤ kMaxModulus (core/budget.hpp): the compiler checks every residue for every
  // candidate C.
  spec.atom.m = ropesim::parse_integer(mo.m, "--m", 1, kMaxModulus);
  spec.atom.r = ropesim::parse_integer(mo.r, "--r", 0, spec.atom.m - 1);
  spec.readout = with_context("--readout", [&] { return proofs::parse_mod_readout(mo.readout); });
  with_context("--rounding", [&] {
    proofs::require_mod_f_large(spec, mo.rounding);
    return 0;
  });
  if (mo.C != "auto") {
    const mpq_class C =
        with_context("--C", [&] { return numeric::parse_decimal_exact(mo.C, "C"); });
    if (sgn(C) <= 0) throw InvalidArgument("--C: C must be positive (or 'auto'), got " + mo.C);
    spec.atom.C = C;
  }
  if (mod.count("--schedule") > 0) {
    spec.schedule =
        with_context("--schedule", [&] { return attention::parse_schedule(mo.schedule); });
    if (spec.schedule->is_multi_axis()) {
      throw InvalidArgument("--schedule: '" + mo.schedule +
                            "' has several position axes; accepted: a one-axis schedule");
    }
    if (spec.schedule->blocks.empty())
      throw InvalidArgument("--schedule: '" + mo.schedule + "' has no rotary block");
  }
  if (mod.count("--out") > 0) io::check_output_path(mo.out, "--out");
  // What remains to fail is C: not finite in F, or F refused (with C = auto that is about F,
  // --format; with a given C, about --C).
  const bool bounded = spec.schedule && !proofs::periodic_schedule_p(*spec.schedule);
  const std::string refusal_flag = spec.atom.C ? "--C" : bounded ? "--schedule" : "--format";
  const proofs::ModModel built =
      with_context(refusal_flag, [&] { return proofs::mod_model(spec); });
  const nlohmann::json report = proofs::to_json(built, spec);
  if (mod.count("--out") > 0) write_model(mo.out, built.model, report);
  if (mo.json) {
    nlohmann::json j = report;
    j["out"] = mo.out.empty() ? nlohmann::json() : nlohmann::json(mo.out);
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << mod_text(built, spec, mo.out);
  }
  return 0;
}

/// `construct offset` with options `oo`: the Y^k pi_a model of the head horizon measures.
int run_construct_offset(const CLI::App& offset, OffsetOptions& oo) {
  const proofs::HorizonSpec spec = proofs::horizon_spec(oo.head);
  attention::check_model_budget("--k " + std::to_string(spec.head.k),
                                proofs::offset_model_shape(spec.head));
  if (offset.count("--out") > 0) io::check_output_path(oo.out, "--out");
  const proofs::HorizonReport report = proofs::horizon(spec);
  proofs::FixedOffsetSpec head = spec.head;
  head.C = attention::exact_rational(report.C);
  const attention::Model model = proofs::offset_model(head);
  nlohmann::json j = proofs::to_json(report);
  if (offset.count("--out") > 0) write_model(oo.out, model, j);
  if (oo.json) {
    j["out"] = oo.out.empty() ? nlohmann::json() : nlohmann::json(oo.out);
    std::cout << j.dump(2) << "\n";
  } else {
    std::string s =
        fmt::format("construct  {}: {} layers, d_model {} (THEORY §6-§7 C5, RoPE-X App D)\n",
                    model.name, model.layers.size(), model.d_model);
    s += horizon_text(report);
    s += fmt::format(
        "simulates  Y^{} pi_a at every position of every word of length L for k <= L <= N_max "
        "(Cor 4.1)\n",
        report.k);
    if (offset.count("--out") > 0) {
      s += fmt::format(
          "model      written to {} (explain it: ropesim run {} --input WORD --trace)\n", oo.out,
          oo.out);
    }
    std::cout << s;
  }
  return 0;
}

}  // namespace

Action add_construct_command(CLI::App& app) {
  auto mo = std::make_shared<ModOptions>();
  auto oo = std::make_shared<OffsetOptions>();
  auto* cmd = app.add_subcommand(
      "construct", "Compile a construction of THEORY §7 into a model spec for `ropesim run`");
  cmd->require_subcommand(1);

  auto* mod = cmd->add_subcommand(
      "mod",
      "The MOD_m^r atom: periodic RoPE (THEORY §7 C4, RoPE-X App C.3) or, under a non-periodic "
      "--schedule, bounded by its certified range (C4')");
  mod->add_option("--m", mo->m, "Modulus m >= 1 (m = 1 is top)")->required();
  mod->add_option("--r", mo->r, "Residue 0 <= r < m")->required();
  mod->add_option("--format", mo->format, "Number format F")->capture_default_str();
  mod->add_option("--C", mo->C, "Scale C (exact decimal) or 'auto'")->capture_default_str();
  mod->add_option("--rounding", mo->rounding, "Rounding of every operation")->capture_default_str();
  mod->add_option("--engine", mo->engine,
                  "Arithmetic engine: mpfr fast auto (same bits, different speed)")
      ->capture_default_str();
  mod->add_option("--readout", mo->readout,
                  "length: accept iff N = r (mod m); eos: accept iff MOD_m^r holds at N+1")
      ->capture_default_str();
  mod->add_option("--schedule", mo->schedule,
                  "RoPE schedule of the head (default: its own periodic table, C4). A periodic "
                  "schedule keeps C4; a non-periodic one (e.g. llama2-7b, single:g=1) builds the "
                  "residue test on its block nearest a turn 2*pi*a/m (r1), exact only up to its "
                  "certified range N_max^MOD (THEORY §7 C4'), or refuses");
  mod->add_option("-o,--out", mo->out, "Write the model spec (JSON) to this file");
  mod->add_flag("--json", mo->json, "Print the construction report as JSON");

  auto* offset =
      cmd->add_subcommand("offset", "The Y^k pi_a transformer (THEORY §6-§7 C5, RoPE-X App D)");
  // The head of `horizon`: one frequency g, or any schedule horizon accepts (a model preset,
  // conventional:base=B,dim=D, hf-config:PATH) as a multi-frequency head with equal weights.
  add_head_shape_options(offset, oo->head);
  add_head_options(offset, oo->head);
  offset->add_option("-o,--out", oo->out, "Write the model spec (JSON) to this file");
  offset->add_flag("--json", oo->json, "Print the construction report as JSON");

  return [cmd, mod, offset, mo, oo]() -> int {
    if (!cmd->parsed()) return -1;
    if (mod->parsed()) return run_construct_mod(*mod, *mo);
    if (offset->parsed()) return run_construct_offset(*offset, *oo);
    return -1;
  };
}

}  // namespace ropesim::cli
