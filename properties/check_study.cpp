// `ropesim check`'s options and JSON (properties/check_study.hpp).
#include "properties/check_study.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "numeric/format.hpp"
#include "numeric/json_number.hpp"
#include "numeric/summation.hpp"

namespace ropesim::properties {

namespace {

// log10 of a positive integer, to about 15 digits (mpz_get_d_2exp: n = d·2^e, 0.5 <= d < 1).
double log10_of(const mpz_class& n) {
  signed long exponent = 0;
  const double d = mpz_get_d_2exp(&exponent, n.get_mpz_t());
  return std::log10(d) + static_cast<double>(exponent) * std::log10(2.0);
}

nlohmann::json thresholds_json(const ThresholdReport& t) {
  nlohmann::json out{{"regime", t.regime}, {"decided_by", t.decided_by}, {"draws", t.draws}};
  nlohmann::json n_star{{"count", t.n_star.size()}};
  if (!t.n_star.empty()) {
    // Each as a number (with KEY_exact when binary64 cannot hold it) and its log10.
    const std::pair<const char*, const mpz_class*> points[] = {
        {"min", &t.n_star.front()}, {"median", &t.median()}, {"max", &t.n_star.back()}};
    for (const auto& [key, n] : points) {
      numeric::put_exact(n_star, key, mpq_class(*n));
      n_star[std::string(key) + "_log10"] = std::round(log10_of(*n) * 1000) / 1000;
    }
  }
  out["n_star"] = n_star;
  out["nontrivial"] = t.nontrivial;
  out["nontrivial_fraction"] = t.draws == 0 ? 0.0 : static_cast<double>(t.nontrivial) / t.draws;
  out["accept_all"] =
      t.languages.count(std::string(127, '1')) ? t.languages.at(std::string(127, '1')) : 0;
  out["accept_none"] =
      t.languages.count(std::string(127, '0')) ? t.languages.at(std::string(127, '0')) : 0;
  out["distinct_languages"] = t.languages.size();
  out["checked_by_computation"] = t.computed;
  return out;
}

}  // namespace

CheckRequest check_request(const CheckArguments& a) {
  if (a.replay && a.replay->empty()) {
    throw InvalidArgument(
        "--replay: empty token; accepted: the token of a failure's replay command (ropesim "
        "check prints it)");
  }
  // the ranges of the CLI's integer options (integer_in)
  const auto in_range = [](std::uint64_t v, const char* flag, std::uint64_t lo, std::uint64_t hi) {
    return ropesim::parse_integer(std::to_string(v), flag, lo, hi);
  };
  CheckRequest r;
  CheckOptions& options = r.options;
  options.trials = static_cast<int>(
      in_range(static_cast<std::uint64_t>(std::max(a.trials, 0)), "--trials", 1, 100000000));
  options.seed = a.seed;
  options.max_length = in_range(a.max_length, "--max-length", 1, 100000000);
  options.max_size = static_cast<int>(
      in_range(static_cast<std::uint64_t>(std::max(a.max_size, 0)), "--max-size", 1, 100000));
  options.replay = a.replay.value_or("");
  if (a.format && !a.format->empty())
    options.format = with_context("--format", [&] { return numeric::parse_format(*a.format); });
  if (a.summation && !a.summation->empty())
    options.summation =
        with_context("--summation", [&] { return numeric::parse_summation(*a.summation); });
  if (a.draw && !a.draw->empty()) {
    if (*a.draw == "standard") {
      options.draw = ConverseDraw::standard;
    } else if (*a.draw == "reachable") {
      options.draw = ConverseDraw::reachable;
    } else {
      throw InvalidArgument(
          fmt::format("--draw: unknown draw '{}'; accepted: standard, reachable", *a.draw));
    }
  }
  std::vector<std::string>& names = r.names;
  if (a.property == "all") {
    if (!options.replay.empty())
      throw InvalidArgument("--replay needs --property NAME (the property that failed)");
    for (const auto* option :
         {options.summation ? "--summation" : nullptr, options.draw ? "--draw" : nullptr}) {
      if (option == nullptr) continue;
      throw InvalidArgument(fmt::format(
          "{} applies only to nope-ltlp and rope-p-ltlpmod (the properties that draw models); "
          "with --property all the others would ignore it: give --property nope-ltlp or "
          "rope-p-ltlpmod",
          option));
    }
    for (const auto& info : property_list()) names.push_back(info.name);
  } else {
    bool known = false;
    for (const auto& info : property_list()) known = known || info.name == a.property;
    if (!known) {
      std::vector<std::string> known_names;
      for (const auto& info : property_list()) known_names.push_back(info.name);
      throw InvalidArgument(fmt::format("--property: unknown property '{}'{}; accepted: all, {}",
                                        a.property, ropesim::did_you_mean(a.property, known_names),
                                        property_names()));
    }
    names.push_back(a.property);
  }
  // Every property run must be able to use the options: refused up front, before any output.
  for (const auto& info : property_list()) {
    if (std::find(names.begin(), names.end(), info.name) == names.end()) continue;
    if (options.format) check_format_usable(info, *options.format);
    check_hypotheses_usable(info, options);
  }
  return r;
}

bool passed(const PropertyOutcome& outcome) { return !outcome.failed && !outcome.gave_up; }

nlohmann::json to_json(const PropertyOutcome& outcome, bool timings) {
  std::string source;
  for (const auto& info : property_list()) {
    if (info.name == outcome.name) source = info.source;
  }
  nlohmann::json j = {
      {"property", outcome.name},           {"source", source},
      {"passed", outcome.passed},           {"discarded", outcome.discarded},
      {"failed", outcome.failed ? 1 : 0},   {"gave_up", outcome.gave_up},
      {"description", outcome.description}, {"counterexample", outcome.counterexample},
      {"replay", outcome.replay_command}};
  if (timings) j["seconds"] = std::round(outcome.seconds * 1000) / 1000;
  if (outcome.thresholds) j["thresholds"] = thresholds_json(*outcome.thresholds);
  return j;
}

nlohmann::json check_json(const std::vector<PropertyOutcome>& outcomes, bool timings) {
  nlohmann::json report = nlohmann::json::array();
  int ok = 0, failed = 0;
  for (const auto& outcome : outcomes) {
    report.push_back(to_json(outcome, timings));
    (passed(outcome) ? ok : failed) += 1;
  }
  return nlohmann::json{{"properties", report}, {"passed", ok}, {"failed", failed}};
}

}  // namespace ropesim::properties
