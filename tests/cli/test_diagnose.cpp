// `ropesim diagnose` (proofs/reports/diagnose.hpp): every finding of the report equals the
// number the single command computes for the same settings — `compare` per band (the correct
// path against exact, each candidate against the correct path), `rotations` for collisions and
// overflow/NaN, `horizon` for the previous-token head, `table bounds` for base-context and
// semantic drift — on the Llama-3.1-8B config in examples/configs and on hand-written configs
// (Phi-3 longrope, Qwen2.5 YaRN, Gemma-2 with head_dim 256).
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/cli/cli_support.hpp"

using namespace cli_test;
using nlohmann::json;

namespace {

const std::string kLlama =
    std::string(ROPESIM_SOURCE_DIR) + "/examples/configs/llama3.1-8b-config.json";

/// The model head's length limit in every run (the quick limit costs about 7 s per head):
/// `--horizon-limit 200`, checked against `horizon --max-length 200` in the first test.
const std::string kHead = " --horizon-limit 200";

json run_json(const std::string& arguments) {
  const Run r = run(arguments);
  INFO(arguments << "\n" << r.err);
  REQUIRE(r.code == 0);
  return json::parse(r.out);
}

double value(const json& m) { return m["value"].is_string() ? INFINITY : m["value"].get<double>(); }

/// max(|cos error|, |sin error|) of one compare JSON stats object.
double max_abs(const json& stats) {
  return std::max(value(stats["cos"]["absolute"]), value(stats["sin"]["absolute"]));
}

/// The lower median over blocks of each block's max(|cos|, |sin|) error.
double typical_abs(const json& compare) {
  std::vector<double> v;
  for (const auto& b : compare["blocks"]) v.push_back(max_abs(b));
  std::sort(v.begin(), v.end());
  return v[(v.size() - 1) / 2];
}

/// Checks every band of `path` against `compare` of its realisation over that band.
void check_bands(const json& path, const std::string& schedule, const std::string& format,
                 const std::string& against) {
  INFO(path["name"]);
  for (const auto& band : path["bands"]) {
    const auto start = band["start"].get<std::uint64_t>(), end = band["end"].get<std::uint64_t>();
    const json c = run_json("compare --schedule " + schedule + " --realization '" +
                            path["realization"].get<std::string>() + "' --against " + against +
                            " --format " + format + " --start " + std::to_string(start) +
                            " --positions " + std::to_string(end - start) + " --json");
    CHECK(value(band["max_absolute"]) == max_abs(c["overall"]));
    CHECK(band["max_ulps"]["value"] == c["overall"]["ulps"]["value"]);
    CHECK(band["typical_absolute"].get<double>() == typical_abs(c));
    CHECK(band["differing"] == c["overall"]["differing"]);
    if (!c["overall"]["angle"].is_null())
      CHECK(band["max_angle"]["value"] == c["overall"]["angle"]["absolute"]["value"]);
  }
}

/// Checks the census of `path` against `rotations`.
void check_census(const json& path, const std::string& schedule, const std::string& format,
                  std::uint64_t context) {
  INFO(path["name"]);
  const json r = run_json("rotations --schedule " + schedule + " --realization '" +
                          path["realization"].get<std::string>() + "' --format " + format +
                          " --positions " + std::to_string(context) + " --json");
  const auto& c = path["census"];
  // one census shape: every key of the path's census is the rotations command's key, equal
  CHECK(c.size() == 8);
  for (const auto& [key, value] : c.items()) {
    INFO(key);
    REQUIRE(r.contains(key));
    CHECK(value == r[key]);
  }
}

/// `rotate` with the report's score settings at offset n over `positions` (comma list).
json rotate_json(const json& report, const json& path, const std::string& schedule,
                 const std::string& format, std::uint64_t n, const std::string& positions,
                 std::uint64_t seed) {
  const auto& settings = report["score"];
  std::string command = "rotate --schedule " + schedule + " --realization '" +
                        path["realization"].get<std::string>() + "' --format " + format +
                        " --seed " + std::to_string(seed) + " --offset " + std::to_string(n) +
                        " --positions " + positions + " --summation " +
                        settings["summation"].get<std::string>();
  if (!settings["accumulator"].is_null())
    command += " --accumulator " + settings["accumulator"].get<std::string>();
  return run_json(command + " --json");
}

/// Checks every score of `path` against `rotate` at its arg-max position and draw (the same
/// exact score, realised error and relative error), the printed command against the settings,
/// and with `brute_force` the maximum itself: rotate over every query position n..N-1
/// (N ≤ 4097) for every draw the report chose at n, the worst relative error over them, and
/// that the chosen draws are the upper half by |exact| of all the draws.
void check_scores(const json& report, const json& path, const std::string& schedule,
                  const std::string& format, bool brute_force = false) {
  INFO(path["name"]);
  const auto context = report["context"].get<std::uint64_t>();
  REQUIRE(path["scores"].size() == report["score"]["offsets"].size());
  for (const auto& x : path["scores"]) {
    const auto n = x["offset"].get<std::uint64_t>();
    INFO("offset " << n);
    const auto p = x["position"].get<std::uint64_t>();
    const auto seed = x["seed"].get<std::uint64_t>();
    const json r = rotate_json(report, path, schedule, format, n, std::to_string(p), seed);
    CHECK(x["exact_score"] == r["exact"]);
    CHECK(x["max_abs_error"] == r["scores"][0]["absolute_error"]);
    CHECK(x["max_rel_error"] == r["scores"][0]["relative_error"]);
    CHECK(x["positions"] == context - n);
    // the printed command is the same rotate call
    const std::string command = x["command"];
    CHECK(command.find("--seed " + std::to_string(seed) + " --offset " + std::to_string(n) +
                       " --position " + std::to_string(p)) != std::string::npos);
    CHECK(command.find("--summation " + report["score"]["summation"].get<std::string>()) !=
          std::string::npos);
    if (!brute_force) continue;
    // the chosen draws: the upper half of all draws by |exact| at n (ties: the smaller seed)
    std::vector<std::pair<double, std::uint64_t>> by_exact;
    for (const auto& k : report["score"]["seeds"]) {
      const json one = rotate_json(report, path, schedule, format, n, std::to_string(n), k);
      by_exact.push_back({-std::fabs(one["exact"].get<double>()), k});
    }
    std::stable_sort(by_exact.begin(), by_exact.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::uint64_t> upper;
    for (std::size_t i = 0; i < (by_exact.size() + 1) / 2; ++i) upper.push_back(by_exact[i].second);
    std::sort(upper.begin(), upper.end());
    CHECK(x["draws"] == json(upper));
    std::string all;
    for (std::uint64_t q = n; q < context; ++q) all += (all.empty() ? "" : ",") + std::to_string(q);
    // per draw the largest |error| over p (first p); over draws the largest relative error
    double worst_rel = -1, worst_abs = 0;
    std::uint64_t worst_at = 0, worst_seed = 0;
    std::vector<double> band_rel(x["bands"].size(), -1), band_abs(x["bands"].size());
    std::vector<std::uint64_t> band_at(x["bands"].size());
    for (const auto k : upper) {
      const json every = rotate_json(report, path, schedule, format, n, all, k);
      const double exact = std::fabs(every["exact"].get<double>());
      double max_error = -1;
      std::uint64_t at = 0;
      std::vector<double> bmax(x["bands"].size(), -1);
      std::vector<std::uint64_t> bat(x["bands"].size());
      for (const auto& row : every["scores"]) {
        REQUIRE(row["absolute_error"].is_number());
        const double e = row["absolute_error"];
        const auto q = row["position"].get<std::uint64_t>();
        if (e > max_error) {
          max_error = e;
          at = q;
        }
        for (std::size_t b = 0; b < x["bands"].size(); ++b) {
          const auto& band = x["bands"][b];
          if (q >= band["start"].get<std::uint64_t>() && q < band["end"].get<std::uint64_t>() &&
              e > bmax[b]) {
            bmax[b] = e;
            bat[b] = q;
          }
        }
      }
      if (max_error / exact > worst_rel) {
        worst_rel = max_error / exact;
        worst_abs = max_error;
        worst_at = at;
        worst_seed = k;
      }
      for (std::size_t b = 0; b < bmax.size(); ++b) {
        if (bmax[b] / exact > band_rel[b]) {
          band_rel[b] = bmax[b] / exact;
          band_abs[b] = bmax[b];
          band_at[b] = bat[b];
        }
      }
    }
    CHECK(x["max_abs_error"].get<double>() == worst_abs);
    CHECK(x["position"] == worst_at);
    CHECK(x["seed"] == worst_seed);
    for (std::size_t b = 0; b < band_rel.size(); ++b) {
      CHECK(x["bands"][b]["max_abs_error"].get<double>() == band_abs[b]);
      CHECK(x["bands"][b]["position"] == band_at[b]);
    }
  }
}

const json* candidate(const json& report, const std::string& name) {
  for (const auto& c : report["candidates"])
    if (c["name"] == name) return &c;
  return nullptr;
}

}  // namespace

TEST_CASE("diagnose on Llama-3.1-8B in bf16 with hf equals compare, rotations, horizon, bounds",
          "[cli][diagnose]") {
  const std::string schedule = "hf-config:" + kLlama;
  const json d =
      run_json("diagnose --config " + kLlama +
               " --dtype bfloat16 --framework hf --context 2100 --draws 2 --json" + kHead);
  CHECK(d["context"] == 2100);
  REQUIRE(d["bands"].size() == 3);  // 0..1023, 1024..2047, 2048..2099
  CHECK(d["bands"][2] == json::array({2048, 2100}));
  check_bands(d["correct"], schedule, "bf16", "exact");
  check_census(d["correct"], schedule, "bf16", 2100);
  check_scores(d, d["correct"], schedule, "bf16");
  // the default offsets 1, 64, 4096 (beyond the context: left out) and N - 1 = 2099;
  // wide-accumulator fp32 as hf's score GEMM
  CHECK(d["score"]["offsets"] == json::array({1, 64, 2099}));
  CHECK(d["score"]["summation"] == "wide-accumulator");
  CHECK(d["score"]["accumulator"] == "fp32");
  // the fp32-phase path keeps every rotation distinct
  CHECK(d["correct"]["census"]["distinct"] == 2100);
  CHECK(d["correct"]["census"]["first_repeat"].is_null());
  for (const auto& c : d["candidates"]) {
    if (!c["skipped"].is_null()) continue;
    check_bands(c, schedule, "bf16", "hf");
    check_census(c, schedule, "bf16", 2100);
    check_scores(d, c, schedule, "bf16");
  }
  // PyTorch CPU's SLEEF calls: with hf, the candidate is the hf-torch-cpu preset's step list,
  // so its first band equals `compare --realization hf-torch-cpu --against hf`
  const json* sleef = candidate(d, "torch-cpu-sleef");
  REQUIRE(sleef != nullptr);
  if ((*sleef)["skipped"].is_null()) {  // needs AVX2 (the preset refuses otherwise)
    const json c =
        run_json("compare --schedule " + schedule +
                 " --realization hf-torch-cpu --against hf --format bf16 --positions 1024 --json");
    CHECK(value((*sleef)["bands"][0]["max_absolute"]) == max_abs(c["overall"]));
    CHECK((*sleef)["bands"][0]["differing"] == c["overall"]["differing"]);
  }
  // a bf16 angle moves the previous-token score more than the correct path does
  const json* angle = candidate(d, "angle-bf16");
  REQUIRE(angle != nullptr);
  CHECK((*angle)["scores"][0]["max_abs_error"].get<double>() >
        d["correct"]["scores"][0]["max_abs_error"].get<double>());
  // bf16 is the model dtype: the bf16 cos/sin cache candidate only changes cos_sin's format
  // and the positions-in-fp16 candidate collides first at 2049 = 2048 (docs/FRAMEWORK_BUGS.md)
  const json* positions = candidate(d, "position-fp16");
  REQUIRE(positions != nullptr);
  CHECK((*positions)["census"]["first_repeat"][1] == 2049);
  // the ranking: by the largest relative score error, then angle, then collisions, with
  // the metric that decided each place; the paths list has every path with its framework
  REQUIRE(d["ranking"].size() >= 2);
  auto worst_rel = [](const json& c) {
    double m = 0;
    for (const auto& x : c["scores"]) m = std::max(m, x["max_rel_error"].get<double>());
    return m;
  };
  for (std::size_t i = 0; i < d["ranking"].size(); ++i) {
    const auto& item = d["ranking"][i];
    CHECK(item["place"] == i + 1);
    CHECK(item["framework"] == "hf");
    if (i + 1 < d["ranking"].size()) {
      const json& x = *candidate(d, item["path"]);
      const json& y = *candidate(d, d["ranking"][i + 1]["path"]);
      CHECK(worst_rel(x) >= worst_rel(y));
      if (worst_rel(x) > worst_rel(y)) CHECK(item["decided_by"] == "score");
      if (worst_rel(x) == worst_rel(y)) CHECK(item["decided_by"] != "score");
    }
  }
  // the first place has the largest relative score error of every measured candidate (with 8
  // draws angle-bf16, with these 2 cos-sin-bf16: a bf16 step either way)
  for (const auto& c : d["candidates"])
    if (c["skipped"].is_null())
      CHECK(worst_rel(*candidate(d, d["ranking"][0]["path"])) >= worst_rel(c));
  CHECK(d["ranking"][0]["path"].get<std::string>().find("bf16") != std::string::npos);
  CHECK(d["paths"].size() == 1 + d["candidates"].size());
  for (const auto& p : d["paths"]) CHECK(p["framework"] == "hf");
  // the model's own previous-token head (64 blocks) equals horizon --schedule … --k 1 --C auto
  // --max-length 200 (--horizon-limit 200, below the quick limit: used and named)
  const json h = run_json("horizon --schedule " + schedule +
                          " --realization hf --format bf16 --k 1 --C auto --max-length 200 --json");
  CHECK(d["horizon"]["blocks"] == 64);
  CHECK(d["horizon"]["limit"] == 200);
  CHECK(d["horizon"]["max_length"] == h["max_length"]);
  CHECK(h["max_length"] == 200);
  CHECK(d["horizon"]["n_max"] == h["n_max"]);
  CHECK(d["horizon"]["n_max_at_limit"] == h["n_max_at_limit"]);
  CHECK(d["horizon"]["C"] == h["C"]);
  // base-context: table bounds --kind base-context for D = 128, L = 2100
  const json b = run_json(
      "table bounds --kind base-context --dim 128 --lengths 2100 --formats bf16 "
      "--finite-max-length 1 --json");
  const auto& bc = d["bounds"]["base_context"];
  CHECK(bc["smallest_grid_base"] == b[0]["exact"]);  // both JSON numbers
  CHECK(bc["smallest_grid_base"].is_number_integer());
  CHECK(bc["config_verdict"] == "passes");  // 5e5 is above the bound 1e4-ish for L = 2100
  // semantic drift: table bounds --kind semantic-drift over m = 0..2099
  const json s = run_json("table bounds --kind semantic-drift --presets " + schedule +
                          " --realizations hf --formats bf16 --max-length 2099 --p 1 --json");
  const auto& drift = d["bounds"]["semantic_drift"];
  auto text = [](const json& r) {
    return r["length"].is_null() ? "> " + std::to_string(r["max_length"].get<std::uint64_t>())
                                 : std::to_string(r["length"].get<std::uint64_t>());
  };
  CHECK(text(drift["exact"]) == s[0]["exact"].get<std::string>());
  CHECK(text(drift["realised"]) == s[0]["hf_bf16"].get<std::string>());
  CHECK(s[0]["channels"] == "48..63");
}

TEST_CASE("diagnose's score maxima are the maxima over every position and chosen draw",
          "[cli][diagnose]") {
  // brute force: rotate (the engine, position by position) over every query position of every
  // chosen draw, against the report's fast scan
  const std::string schedule = "hf-config:" + kLlama;
  const json d = run_json(
      "diagnose --config " + kLlama +
      " --dtype bf16 --framework hf --context 1100 --draws 2 --offsets 1,1050 --json" + kHead);
  // offset 1 spans both bands (0..1023, 1024..1099), 1050 the second only
  CHECK(d["score"]["offsets"] == json::array({1, 1050}));
  CHECK(d["score"]["seeds"] == json::array({1, 2}));
  check_scores(d, d["correct"], schedule, "bf16", true);
  check_scores(d, *candidate(d, "angle-bf16"), schedule, "bf16", true);
  check_scores(d, *candidate(d, "inv-freq-cast"), schedule, "bf16", true);
  CHECK(d["correct"]["score_method"] == "binary64");
}

TEST_CASE("diagnose scores Qwen2.5-YaRN with the attention factor on both sides",
          "[cli][diagnose]") {
  // hf multiplies cos and sin by YaRN's attention factor s = 0.1·ln(4) + 1, so its realised
  // score is about s²·qᵀR_{-n}k: the exact side must carry s² too. With it the correct path's
  // relative error is rounding only: hf's bf16 cos/sin cache and its eager rotation in bf16
  // (three roundings per rotated coordinate) and the score's rounding, maximised over 4199
  // positions and 4 draws, 2.19 % at n = 1 (p = 2911, seed 6). The issue asked ≤ 2 %, which
  // sampled positions met; the maximum over every position is above it, and the error is the
  // framework's, not the comparison's: the same comparison at that place is 1.04e-5 in fp32,
  // and 0.23 % for a path that keeps cos/sin in fp32 and stores the rotated q, k once
  // (docs/CLI.md, diagnose). It is far below the s² - 1 = 30 % a factor left out of one side
  // shows; the inv_freq buffer cast moves the score at offset 4096 by ≥ 20 % (issue 35's
  // done-when, on positions 0..4199).
  const std::string schedule = "qwen2.5-7b-yarn";
  const json d =
      run_json("diagnose --schedule " + schedule +
               " --dtype bf16 --framework hf --context 4200 --offsets 1,64,4096 --json" + kHead);
  CHECK(d["score"]["offsets"] == json::array({1, 64, 4096}));
  REQUIRE(d["attention_factor"].is_number());
  const double s = d["attention_factor"];
  CHECK(s == Approx(0.1 * std::log(4.0) + 1).epsilon(1e-15));
  for (const auto& x : d["correct"]["scores"]) {
    INFO("offset " << x["offset"]);
    CHECK(x["max_rel_error"].get<double>() <= 0.03);
  }
  const json* cast = candidate(d, "inv-freq-cast");
  REQUIRE(cast != nullptr);
  REQUIRE((*cast)["scores"].size() == 3);
  CHECK((*cast)["scores"][2]["offset"] == 4096);
  CHECK((*cast)["scores"][2]["max_rel_error"].get<double>() >= 0.20);
  // every number is rotate's at the same position; rotate names the factor it applied
  check_scores(d, d["correct"], "qwen2.5-7b-yarn", "bf16");
  check_scores(d, *cast, "qwen2.5-7b-yarn", "bf16");
  const json r = rotate_json(d, d["correct"], schedule, "bf16", 1, "1", 1);
  CHECK(r["attention_factor"] == d["attention_factor"]);
  // left out of one side, s would show as a relative error near s² - 1 ≈ 30 % on the correct
  // path; the rounding error is far below it
  const double rel = d["correct"]["scores"][0]["max_rel_error"];
  CHECK(rel < (s * s - 1) / 4);
  // where the correct path's error comes from, at its worst place (offset 1): the comparison
  // itself agrees to fp32's rounding when the path computes in fp32, and bf16 storing the
  // rotated q, k once (cos/sin and the rotation in fp32) is ten times smaller than hf's bf16
  // cache and eager rotation: the ≥ 2 % is bf16's, as the framework computes it
  const json& worst = d["correct"]["scores"][0];
  REQUIRE(worst["offset"] == 1);
  const std::string at = " --seed " + std::to_string(worst["seed"].get<std::uint64_t>()) +
                         " --offset 1 --position " +
                         std::to_string(worst["position"].get<std::uint64_t>()) +
                         " --summation wide-accumulator --accumulator fp32 --json";
  const json in_fp32 =
      run_json("rotate --schedule " + schedule + " --realization hf --format fp32" + at);
  CHECK(in_fp32["attention_factor"] == d["attention_factor"]);
  CHECK(in_fp32["scores"][0]["relative_error"].get<double>() < 1e-4);
  const json stored_once =
      run_json("rotate --schedule " + schedule +
               " --realization 'pipeline:exponent=fp32;power=fp32;inv_freq=fp32;position=fp32;"
               "angle=fp32;cos_sin=fp32;attention_scaling=fp32;table=fp32;rotation=fp32;output=A;"
               "recipe=product;arithmetic=theory;layout=rotate_half' --format bf16" +
               at);
  CHECK(stored_once["exact"] == worst["exact_score"]);
  CHECK(stored_once["scores"][0]["relative_error"].get<double>() < rel / 4);
}

TEST_CASE("diagnose with --framework hf-torch-cpu: PyTorch CPU's own SLEEF path as the framework",
          "[cli][diagnose]") {
  const Run probe =
      run("compare --schedule llama2-7b --realization hf-torch-cpu --format bf16 "
          "--positions 8 --json");
  if (probe.code != 0) {
    WARN("hf-torch-cpu does not apply here (no AVX2?): " << probe.err);
    return;
  }
  const std::string schedule = "llama2-7b";
  const json d = run_json(
      "diagnose --schedule llama2-7b --dtype bf16 --framework hf-torch-cpu --context "
      "1100 --draws 2 --json" +
      kHead);
  CHECK(d["framework"] == "hf-torch-cpu");
  check_bands(d["correct"], schedule, "bf16", "exact");
  check_scores(d, d["correct"], schedule, "bf16");
  // the model's own head: all 64 blocks, which SLEEF's 8-lane calls can realise
  CHECK(d["horizon"]["skipped"].is_null());
  CHECK(d["horizon"]["blocks"] == 64);
  // the SLEEF candidate is the framework itself: nothing to measure
  const json* sleef = candidate(d, "torch-cpu-sleef");
  REQUIRE(sleef != nullptr);
  CHECK((*sleef)["skipped"].get<std::string>().find("same step list") != std::string::npos);
  // the buffer cast on top of PyTorch's own trig, against hf-torch-cpu
  const json* cast = candidate(d, "inv-freq-cast");
  REQUIRE(cast != nullptr);
  REQUIRE((*cast)["skipped"].is_null());
  CHECK((*cast)["realization"].get<std::string>().find("cos_sin=fp32:sleef-u10") !=
        std::string::npos);
  check_bands(*cast, schedule, "bf16", "hf-torch-cpu");
  check_scores(d, *cast, schedule, "bf16");
}

TEST_CASE("diagnose on hand-written Phi-3 longrope, Qwen2.5 YaRN and Gemma-2 configs",
          "[cli][diagnose]") {
  const std::string phi3 = temp_path("diagnose_phi3.json");
  {
    // Phi-3-mini-128k's shape: head_dim 96 (48 blocks), longrope with 48 factors each
    std::string shortf, longf;
    for (int i = 0; i < 48; ++i) {
      shortf += (i ? "," : "") + std::to_string(1.0 + 0.01 * i);
      longf += (i ? "," : "") + std::to_string(1.0 + 1.0 * i);
    }
    std::ofstream(phi3)
        << R"({"hidden_size": 3072, "num_attention_heads": 32, "rope_theta": 10000.0,
      "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
      "rope_scaling": {"type": "longrope", "short_factor": [)"
        << shortf << "], \"long_factor\": [" << longf << "]}}";
  }
  const std::string qwen = temp_path("diagnose_qwen.json");
  std::ofstream(qwen)
      << R"({"hidden_size": 3584, "num_attention_heads": 28, "rope_theta": 1000000.0,
    "max_position_embeddings": 32768,
    "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}})";
  const std::string gemma = temp_path("diagnose_gemma2.json");
  std::ofstream(gemma) << R"({"hidden_size": 3584, "num_attention_heads": 16, "head_dim": 256,
    "rope_theta": 10000.0, "max_position_embeddings": 8192})";
  for (const auto& [path, dtype, blocks] :
       {std::tuple{phi3, std::string("bf16"), 48}, std::tuple{qwen, std::string("fp16"), 64},
        std::tuple{gemma, std::string("bf16"), 128}}) {
    INFO(path);
    const json d = run_json("diagnose --config " + path + " --dtype " + dtype +
                            " --framework hf --context 600 --draws 1 --json" + kHead);
    const std::string schedule = "hf-config:" + path;
    check_bands(d["correct"], schedule, dtype, "exact");
    check_census(d["correct"], schedule, dtype, 600);
    const json* cast = candidate(d, "inv-freq-cast");
    REQUIRE(cast != nullptr);
    if ((*cast)["skipped"].is_null()) {
      check_bands(*cast, schedule, dtype, "hf");
      check_census(*cast, schedule, dtype, 600);
    }
    CHECK(d["bounds"]["base_context"]["dim"] == 2 * blocks);
  }
  for (const auto& p : {phi3, qwen, gemma}) std::filesystem::remove(p);
}

TEST_CASE("diagnose with several frameworks: one run, one column each, the same numbers",
          "[cli][diagnose]") {
  const std::string args =
      "diagnose --schedule llama3-8b --dtype bf16 --context 300 --draws 2" + kHead;
  // flash-attn has vllm's pipeline spec: its report is vllm's, measured once and renamed
  const json both = run_json(args + " --framework hf,vllm,flash-attn --json");
  CHECK(both["frameworks"] == json::array({"hf", "vllm", "flash-attn"}));
  REQUIRE(both["reports"].size() == 3);
  // each framework's report is the one a single run prints
  for (std::size_t k = 0; k < 3; ++k) {
    const std::string f = both["frameworks"][k];
    INFO(f);
    const json one = run_json(args + " --framework " + f + " --json");
    json mine = both["reports"][k];
    CHECK(mine["paths"] == one["paths"]);
    CHECK(mine["ranking"] == one["ranking"]);
    CHECK(mine["bounds"] == one["bounds"]);  // computed once, copied
    CHECK(mine["horizon"] == one["horizon"]);
    mine.erase("bounds");  // the rest: every key of the single run's report
    json single = one;
    single.erase("bounds");
    CHECK(mine == single);
  }
  // paths and ranking items of the frameworks in one list, each naming its framework
  CHECK(both["paths"].size() == both["reports"][0]["paths"].size() * 3);
  std::size_t vllm_items = 0;
  for (const auto& item : both["ranking"]) vllm_items += item["framework"] == "vllm";
  CHECK(vllm_items == both["reports"][1]["ranking"].size());
  // the text has the side-by-side table; the HTML one figure per framework per kind (one run
  // prints the text and writes the HTML; at 1100 positions: the HTML's figures need two bands,
  // at 300 gnuplot refuses the error figure, "all points y value undefined")
  const std::string html = temp_path("diagnose_two.html");
  const Run text = run("diagnose --schedule llama3-8b --dtype bf16 --context 1100 --draws 1" +
                       kHead + " --framework hf,vllm --out " + html);
  INFO(text.err);
  REQUIRE(text.code == 0);
  CHECK(text.out.find("hf max_rel_error") != std::string::npos);
  CHECK(text.out.find("vllm max_rel_error") != std::string::npos);
  std::ifstream in(html);
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto count = [&](const std::string& what) {
    std::size_t n = 0;
    for (auto at = page.find(what); at != std::string::npos; at = page.find(what, at + 1)) ++n;
    return n;
  };
  CHECK(count("class=\"figure error\"") == 2);
  CHECK(count("class=\"figure collision\"") == 2);
  CHECK(count("<svg") >= 4);
  std::filesystem::remove(html);
  expect_usage_error(run(args + " --framework hf,vlm"), "--framework");
  expect_usage_error(run(args + " --framework hf --offsets 1100"), "--offsets");
  // Bad values of the score check's and the head's options: one line, exit 2, no report.
  const std::string bad =
      "diagnose --schedule llama3-8b --dtype bf16 --context 300 "
      "--framework hf --out " +
      html;
  expect_usage_error(run(bad + " --offsets 0"), "--offsets");
  expect_usage_error(run(bad + " --draws 0"), "--draws");
  expect_usage_error(run(bad + " --draws 65"), "--draws");
  expect_usage_error(run(bad + " --horizon-limit 0"), "--horizon-limit");
  CHECK_FALSE(std::filesystem::exists(html));
}

TEST_CASE("diagnose writes Markdown and HTML reports; bad input is one line, exit 2, no file",
          "[cli][diagnose]") {
  const std::string md = temp_path("diagnose.md"), html = temp_path("diagnose.html");
  const Run r = run("diagnose --schedule llama3-8b --dtype bf16 --framework hf --context 300" +
                    kHead + " --out " + md);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.rfind("diagnose ", 0) == 0);  // the summary comes first
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text.find("Made by ropesim") != std::string::npos);
  CHECK(text.find("inv-freq-cast") != std::string::npos);
  const Run h =
      run("diagnose --schedule llama3-8b --dtype bf16 --framework hf --context 1100 --draws 1" +
          kHead + " --out " + html);
  REQUIRE(h.code == 0);
  std::ifstream hin(html);
  const std::string page((std::istreambuf_iterator<char>(hin)), std::istreambuf_iterator<char>());
  CHECK(page.find("<svg") != std::string::npos);
  CHECK(page.find("Collision map") != std::string::npos);
  std::filesystem::remove(md);
  std::filesystem::remove(html);

  const std::string none = temp_path("diagnose_none.html");
  expect_usage_error(
      run("diagnose --schedule llama3-8b --dtype bf16 --framework hff --context 10 --out " + none),
      "--framework");
  expect_usage_error(run("diagnose --schedule llama3-8b --dtype bf17 --framework hf --out " + none),
                     "--dtype");
  // did you mean, for each name-valued flag
  expect_usage_error(run("diagnose --schedule llama3-8b --dtype bf16 --framework hf-torch-cpo "
                         "--context 10 --out " +
                         none),
                     "did you mean 'hf-torch-cpu'?");
  expect_usage_error(run("diagnose --schedule llama3-8b --dtype bfloat61 --framework hf "
                         "--context 10 --out " +
                         none),
                     "did you mean 'bfloat16'?");
  expect_usage_error(run("diagnose --schedule lama3-8b --dtype bf16 --framework hf "
                         "--context 10 --out " +
                         none),
                     "did you mean 'llama3-8b'?");
  expect_usage_error(run("diagnose --schedule llama3-8b --dtype bf16 --framework hf --out x.txt"),
                     "REPORT.html");
  expect_usage_error(run("diagnose --dtype bf16 --framework hf"), "--config");
  expect_usage_error(run("diagnose --schedule conventional:base=10000,dim=128 --dtype bf16 "
                         "--framework hf --out " +
                         none),
                     "max_position_embeddings");
  expect_usage_error(run("diagnose --schedule llama3.1-8b --dtype bf16 --framework hf "
                         "--context 2147483648 --out " +
                         none),
                     "--allow-slow");
  CHECK(!std::filesystem::exists(none));
}

// The HTML report at short contexts (one position band, ending at N <= 1024): gnuplot used to
// refuse the error figure ("all points y value undefined": its x range began at 1000, past the
// band's end). The page must be whole: one document, every element the report opens closed,
// both figures drawn (an SVG each, with paths), at 512 and at 1024 positions.
TEST_CASE("diagnose writes a well-formed HTML report at contexts 512 and 1024", "[cli][diagnose]") {
  for (const std::uint64_t n : {512u, 1024u}) {
    INFO("context " << n);
    const std::string html = temp_path("diagnose_short_" + std::to_string(n) + ".html");
    const Run r = run("diagnose --schedule llama3-8b --dtype bf16 --framework hf --context " +
                      std::to_string(n) + " --draws 1" + kHead + " --out " + html);
    INFO(r.err);
    REQUIRE(r.code == 0);
    std::ifstream in(html);
    const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto count = [&](const std::string& what) {
      std::size_t k = 0;
      for (auto at = page.find(what); at != std::string::npos; at = page.find(what, at + 1)) ++k;
      return k;
    };
    CHECK(page.rfind("<!DOCTYPE html>\n<html", 0) == 0);
    CHECK(page.size() >= 15);
    CHECK(page.substr(page.size() - 15) == "</body></html>\n");
    CHECK(count("<html") == 1);
    CHECK(count("<body>") == 1);
    for (const std::string tag : {"div", "table", "svg", "h3", "tr", "g"}) {
      INFO(tag);
      // opening tags "<tag>" or "<tag " (not "<tagname"), against closing "</tag>"
      CHECK(count("<" + tag + ">") + count("<" + tag + " ") == count("</" + tag + ">"));
    }
    // both figures, each with its own SVG holding drawn paths
    for (const std::string kind : {"figure error", "figure collision"}) {
      INFO(kind);
      const auto at = page.find("class=\"" + kind + "\"");
      REQUIRE(at != std::string::npos);
      const auto svg = page.find("<svg", at), end = page.find("</svg>", at);
      REQUIRE(svg != std::string::npos);
      REQUIRE(end != std::string::npos);
      CHECK(page.find("<path", svg) < end);
    }
    // the error figure's x axis holds the band's end N (no tick beyond 10·N)
    CHECK(page.find("1e+06") == std::string::npos);
    std::filesystem::remove(html);
  }
}

TEST_CASE("diagnose's Markdown report writes a config path as text, not HTML", "[cli][diagnose]") {
  // The HTML report escaped the path; the Markdown one embedded it raw, so a file named
  // '<img src=x onerror=alert(1)>.json' became an element in any Markdown viewer.
  const std::string dir = temp_path("md_escape");
  std::filesystem::create_directories(dir);
  const std::string config = dir + "/<img src=x onerror=alert(1)>.json";
  std::filesystem::copy_file(kLlama, config, std::filesystem::copy_options::overwrite_existing);
  const std::string md = dir + "/report.md";
  const Run r = run("diagnose --config '" + config +
                    "' --dtype bf16 --framework hf --context 300 --draws 1 --out " + md);
  INFO(r.err);
  REQUIRE(r.code == 0);
  std::ifstream in(md);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // outside the fenced summary (where Markdown shows text as it is) no raw tag: the "Made by"
  // line and the score table's commands carry the path
  std::istringstream lines(text);
  std::string line;
  bool fenced = false;
  int raw = 0, escaped = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("```", 0) == 0) {
      fenced = !fenced;
      continue;
    }
    if (fenced) continue;
    raw += line.find("<img") != std::string::npos;
    escaped += line.find("&lt;img src=x onerror=alert(1)&gt;.json") != std::string::npos;
  }
  CHECK_FALSE(fenced);
  CHECK(raw == 0);
  CHECK(escaped >= 2);
  std::filesystem::remove_all(dir);
}
