// `ropesim compile 'FORMULA' --alphabet ab --format F --out model.json [--explain] [--json]`:
// compiles an LTL[P,MOD] formula into an F-transformer spec that `ropesim run` executes
// (THEORY §7 C1, C4; proofs/compiler/compiler.hpp). Argument parsing and output only (STYLE): the
// science is in proofs/.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "attention/schedules/schedule.hpp"
#include "attention/transformer/model_spec.hpp"
#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "cli/table.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "logic/formula.hpp"
#include "numeric/exact.hpp"
#include "numeric/exact_decimal.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "proofs/compiler/compile_request.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/range/horizon_spec.hpp"
#include "proofs/reports/certificate.hpp"

namespace ropesim::cli {

namespace {

/// The --explain text: per layer the heads and FFN gadgets by the coordinates they read and
/// write, the constants in F, the P-head certificate and the MOD margins.
std::string explain_text(const nlohmann::json& j) {
  std::string s;
  s += fmt::format("coordinates  {} (d_model {})\n",
                   fmt::join(j["coordinates"].get<std::vector<std::string>>(), ", "),
                   j["coordinates"].size());
  s += fmt::format("f_large      {}\n", j["f_large"].get<std::string>());
  std::size_t l = 0;
  for (const auto& layer : j["layers"]) {
    s += fmt::format("layer {}\n", l++);
    for (const char* part : {"heads", "ffn"}) {
      for (const auto& g : layer[part]) {
        std::string constants;
        for (const auto& [k, v] : g["constants"].items()) {
          constants += fmt::format(" {}={}", k, v.is_string() ? v.get<std::string>() : v.dump());
        }
        s +=
            fmt::format("  {:<5} {:<15} reads [{}] writes [{}]{}\n",
                        std::string(part) == "heads" ? "head" : "ffn", g["kind"].get<std::string>(),
                        fmt::join(g["reads"].get<std::vector<std::string>>(), ", "),
                        fmt::join(g["writes"].get<std::vector<std::string>>(), ", "), constants);
      }
    }
  }
  if (!j["past_certificate"].is_null()) {
    const auto& c = j["past_certificate"];
    s += fmt::format(
        "P heads      re-binarisation f1 = {}, f2 = {}; head outputs h in [{}, {}] re-binarise to "
        "exactly 1 for "
        "every count of earlier psi positions {}\n",
        c["f1"].get<std::string>(), c["f2"].get<std::string>(), c["min_output"].get<std::string>(),
        c["max_output"].get<std::string>(),
        c["certified_count"].is_null()
            ? fmt::format("(every count: Z and h stop changing at count {})",
                          c["stagnation_count"].dump())
            : fmt::format("up to {} (checked)", c["certified_count"].dump()));
  }
  for (const auto& m : j["mod_heads"]) {
    s += fmt::format("MOD_{}^{}     C = {}, min realised margin {} over {} residues (>= f_large)\n",
                     m["m"].dump(), m["r"].dump(), m["C"].get<std::string>(),
                     m["min_margin"].get<std::string>(), m["margins"].size());
  }
  return s;
}

}  // namespace

namespace {

struct CompileOptions {
  std::string formula;
  std::string alphabet = "ab";
  std::string format = "fp32";
  std::string rounding = "nearest-even";
  std::string out;
  std::string certify = "10000";
  bool explain = false;
  bool json = false;
  bool layer_norm = false;
  std::string schedule, certificate;
  ProgressChoice progress = ProgressChoice::automatic;
  bool allow_slow = false;
};

/// Registers the options of the command into `o`; returns the command.
CLI::App* add_compile_options(CLI::App& app, CompileOptions* o) {
  auto* cmd = app.add_subcommand("compile",
                                 "Compile an LTL[P,MOD] formula into an F-transformer spec for "
                                 "`ropesim run` (THEORY §7 C1, C4)");
  cmd->add_option(
         "formula", o->formula,
         "The formula, e.g. 'P(a & !P true)' or 'mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)'")
      ->required();
  cmd->add_option("--alphabet", o->alphabet, "Symbols: letters ('ab') or comma-separated ('a,b0')")
      ->capture_default_str();
  cmd->add_option("--format", o->format, "Number format F")->capture_default_str();
  cmd->add_option("--rounding", o->rounding, "Rounding of every operation")->capture_default_str();
  cmd->add_option("--certify", o->certify,
                  "Counts of earlier psi positions the P-head certificate checks (1..1000000)")
      ->capture_default_str();
  cmd->add_option("--schedule", o->schedule,
                  "RoPE schedule of every rotary head (default: single:g=1 for the Y^k heads, "
                  "each MOD atom's own periodic table): any schedule horizon accepts, e.g. "
                  "llama2-7b or conventional:base=10000,dim=8; Y^k heads use every block "
                  "(equal weights), MOD atoms a block nearest a turn 2*pi*a/m, exact only up "
                  "to its certified range unless the schedule is periodic (THEORY §7 C4')");
  cmd->add_option("-o,--out", o->out, "Write the model spec (JSON) to this file");
  cmd->add_option("--certificate", o->certificate,
                  "Write the certificate (the model file's SHA-256, f_large, the P-head count, MOD "
                  "constants and margins, the Y^k ranges, the certified length) to FILE.json, "
                  "for ropesim-verify FILE.json MODEL.json; needs --out");
  cmd->add_flag("--explain", o->explain,
                "Print per layer which named coordinates each head and FFN reads and writes, the "
                "constants in F, "
                "margins and certified lengths");
  cmd->add_flag("--json", o->json, "Print the compiler's report as JSON");
  cmd->add_flag("--allow-slow", o->allow_slow,
                "Compile even when the P-head certificate's estimated time exceeds the default "
                "budget (10 min)");
  cmd->add_flag("--layer-norm", o->layer_norm,
                "Post-LN model with the LayerNorm mirror (THEORY §7 C1): every coordinate gets a "
                "mirror 1 - x, "
                "head outputs are scaled by 2^-p, and the compiler checks in F that every "
                "LayerNorm is exact");
  add_progress_flags(cmd, o->progress);

  return cmd;
}

/// Runs the command with options `o` (`cmd` tells which flags were given); returns the exit code.
int run_compile(const CLI::App& cmd, CompileOptions& o) {
  proofs::CompileArguments arguments;
  arguments.formula = o.formula;
  arguments.alphabet = o.alphabet;
  arguments.format = o.format;
  arguments.rounding = o.rounding;
  arguments.certify = o.certify;
  if (cmd.count("--schedule") > 0) arguments.schedule = o.schedule;
  arguments.layer_norm = o.layer_norm;
  arguments.allow_slow = o.allow_slow;
  proofs::CompileRequest request = proofs::compile_request(arguments);
  proofs::CompileOptions& options = request.options;
  const std::vector<std::string>& alphabet = request.alphabet;
  const ltl::Formula& formula = request.formula;
  if (cmd.count("--out") > 0) io::check_output_path(o.out, "--out");
  if (cmd.count("--certificate") > 0) {
    if (cmd.count("--out") == 0) {  // the certificate names the model file by its SHA-256
      throw InvalidArgument(
          "--certificate needs --out MODEL.json: the certificate is about the model file, "
          "named by its SHA-256 (ropesim-verify CERT.json MODEL.json)");
    }
    (void)output_kind_for(o.certificate, "--certificate", {OutputKind::json});
    io::check_output_path(o.certificate, "--certificate");
    io::check_distinct_outputs({{o.out, "--out"}, {o.certificate, "--certificate"}});
    if (o.layer_norm) {  // refused before compiling (proofs::compile_certificate refuses too)
      throw InvalidArgument(
          "--certificate: a certificate covers models without --layer-norm (the LayerNorm "
          "mirror's checks are not part of it)");
    }
  }
  ProgressReporter progress(o.progress, "compile: certifying P heads");
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
    progress.update(done, total, "counts");
  };
  const proofs::CompiledModel compiled = proofs::compile(formula, alphabet, options);
  progress.finish();
  const nlohmann::json report = proofs::to_json(compiled);
  nlohmann::json spec;
  if (cmd.count("--out") > 0) {
    spec = attention::model_to_json(compiled.model);
    spec["_construction"] = report;
    spec["_provenance"] = provenance();
  }
  // built (and possibly refused) before any file is written; it names the model file's bytes
  std::string certificate;
  if (!o.certificate.empty()) {
    nlohmann::json c = proofs::compile_certificate(compiled, options);
    c["model_sha256"] = sha256_hex(model_spec_text(spec));
    certificate = c.dump(1) + "\n";
  }
  if (cmd.count("--out") > 0) write_model_spec(o.out, spec);
  if (!o.certificate.empty()) io::write_output_file(o.certificate, certificate, "--certificate");
  if (o.json) {
    nlohmann::json j = report;
    j["out"] = o.out.empty() ? nlohmann::json() : nlohmann::json(o.out);
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::string s =
      fmt::format("compile    {} over {{{}}} in {} ({}): {} layers, d_model {}\n", compiled.formula,
                  fmt::join(alphabet, ", "), options.policy.format.name,
                  numeric::to_string(options.policy.rounding), compiled.model.layers.size(),
                  compiled.model.d_model);
  if (compiled.layer_norm) {
    s += fmt::format(
        "layernorm  post-LN, eps 0, gain = bias = 1/2; {} coordinate/mirror pairs ({} padding), "
        "{} raw "
        "coordinates scaled by {} (gain = bias = {}): every LayerNorm checked exact in {}\n",
        compiled.layer_norm->pairs, compiled.layer_norm->padding, compiled.layer_norm->raw,
        numeric::exact_decimal(compiled.layer_norm->raw_scale),
        numeric::exact_decimal(compiled.layer_norm->raw_gain), options.policy.format.name);
  }
  s += fmt::format("certified  every coordinate exactly 0/1 (0 at BOS) on every word {}\n",
                   compiled.certified_length
                       ? fmt::format("of length <= {}{}", *compiled.certified_length,
                                     compiled.certified_length_at_limit
                                         ? " (where the range checks stopped without a "
                                           "failure: it may be exact on longer words)"
                                         : "")
                       : std::string("(any length)"));
  if (o.explain) s += explain_text(report);
  if (!o.out.empty()) {
    s += fmt::format("model      written to {} (run it: ropesim run {} --input WORD [--trace])\n",
                     o.out, o.out);
  }
  std::cout << s;
  return 0;
}

}  // namespace

Action add_compile_command(CLI::App& app) {
  auto o = std::make_shared<CompileOptions>();
  CLI::App* cmd = add_compile_options(app, o.get());
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_compile(*cmd, *o);
  };
}

}  // namespace ropesim::cli
