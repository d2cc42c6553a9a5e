#include "properties/check.hpp"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <sstream>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "properties/converse.hpp"
#include "properties/theorems.hpp"

namespace ropesim::properties {
namespace {

// Counts finished cases for the progress callback (RapidCheck calls it on this thread).
class ProgressListener : public rc::detail::TestListener {
 public:
  ProgressListener(const std::string& name, int wanted, const CheckProgress& progress)
      : name_(name), wanted_(wanted), progress_(progress) {}
  void onTestCaseFinished(const rc::detail::CaseDescription& description) override {
    auto& record = converse_record();
    if (description.result.type == rc::detail::CaseResult::Type::Success) {
      ++done_;
      if (record) collect(*record);
    }
    if (description.result.type == rc::detail::CaseResult::Type::Discard) ++discarded_;
    record.reset();
    if (progress_) progress_(name_, done_, wanted_);
  }
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {
    converse_record().reset();
  }
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}

 private:
  std::string name_;
  int wanted_;
  int done_ = 0;
  int discarded_ = 0;
  const CheckProgress& progress_;

 public:
  /// Cases discarded so far (RapidCheck's results count only successes).
  [[nodiscard]] int discarded() const { return discarded_; }
  /// What the passed converse cases recorded (none for the other properties).
  [[nodiscard]] std::optional<ThresholdReport> thresholds() const {
    if (!thresholds_) return std::nullopt;
    ThresholdReport out = *thresholds_;
    std::sort(out.n_star.begin(), out.n_star.end());
    return out;
  }

 private:
  void collect(const ConverseCase& record) {
    if (!thresholds_) {
      thresholds_.emplace();
      thresholds_->regime = record.regime;
      thresholds_->decided_by = record.decided_by;
    }
    ThresholdReport& t = *thresholds_;
    ++t.draws;
    if (record.n_star) t.n_star.push_back(*record.n_star);
    ++t.languages[record.pattern];
    if (record.pattern.find('0') != std::string::npos &&
        record.pattern.find('1') != std::string::npos)
      ++t.nontrivial;
    if (record.computed) ++t.computed;
  }
  std::optional<ThresholdReport> thresholds_;
};

// The replay token: RapidCheck's Reproduce (random state, size, shrink path) serialised by
// RapidCheck itself, written as lowercase hex.
std::string encode_replay(const rc::detail::Reproduce& reproduce) {
  std::vector<std::uint8_t> bytes;
  rc::detail::serialize(reproduce, std::back_inserter(bytes));
  std::string out;
  for (const auto b : bytes) out += fmt::format("{:02x}", b);
  return out;
}

rc::detail::Reproduce decode_replay(const std::string& token) {
  const auto bad = [&] {
    return InvalidArgument(
        fmt::format("--replay: '{}' is not a replay token (the hex string printed with a failure)",
                    token.size() > 40 ? token.substr(0, 40) + "..." : token));
  };
  if (token.empty() || token.size() % 2 != 0) throw bad();
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i < token.size(); i += 2) {
    int value = 0;
    for (std::size_t j = i; j < i + 2; ++j) {
      const char c = token[j];
      value *= 16;
      if (c >= '0' && c <= '9')
        value += c - '0';
      else if (c >= 'a' && c <= 'f')
        value += c - 'a' + 10;
      else
        throw bad();
    }
    bytes.push_back(static_cast<std::uint8_t>(value));
  }
  rc::detail::Reproduce reproduce;
  try {
    const auto end = rc::detail::deserialize(bytes.begin(), bytes.end(), reproduce);
    if (end != bytes.end()) throw bad();
  } catch (const InvalidArgument&) {
    throw;
  } catch (const std::exception&) {
    throw bad();
  }
  return reproduce;
}

// RapidCheck's failure text without the source expression of RC_FAIL (its message follows) and
// with the file named from the repository root: "properties/theorems.cpp:187: message".
std::string tidy_description(const std::string& text) {
  std::vector<std::string> kept;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.empty() || line.rfind("RC_FAIL(", 0) == 0) continue;
    const std::size_t at = line.find("properties/");
    if (kept.empty() && at != std::string::npos) line = line.substr(at);
    kept.push_back(line);
  }
  return fmt::format("{}", fmt::join(kept, " "));
}

std::string replay_command(const std::string& name, const CheckOptions& options,
                           const std::string& token) {
  std::string command = fmt::format("ropesim check --property {} --max-length {} --max-size {}",
                                    name, options.max_length, options.max_size);
  if (options.format) command += fmt::format(" --format {}", options.format->name);
  if (options.summation)
    command += fmt::format(" --summation {}", numeric::to_string(*options.summation));
  if (options.draw == ConverseDraw::reachable) command += " --draw reachable";
  command += fmt::format(" --replay {}", token);
  return command;
}

}  // namespace

std::span<const PropertyInfo> property_list() {
  static const std::vector<PropertyInfo> list = [] {
    std::vector<PropertyInfo> out;
    for (const auto& theorem : theorems()) out.push_back(theorem.info);
    return out;
  }();
  return list;
}

std::string property_names() {
  std::vector<std::string> names;
  for (const auto& p : property_list()) names.push_back(p.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

void check_format_usable(const PropertyInfo& info, const numeric::Format& format) {
  if (info.min_precision == 0) return;  // draws no format: --format does not concern it
  const std::string accepted =
      fmt::format("accepted: a floating format with precision {}..{} (e.g. fp16, p=11,e=5)",
                  info.min_precision, info.max_precision);
  if (format.is_fixed_point()) {
    throw InvalidArgument(
        fmt::format("--format: '{}' is fixed point; property {} draws floating formats only; {}",
                    format.name, info.name, accepted));
  }
  if (format.precision < info.min_precision || format.precision > info.max_precision) {
    throw InvalidArgument(fmt::format(
        "--format: '{}' has precision {}; property {} draws precisions {}..{}; {}", format.name,
        format.precision, info.name, info.min_precision, info.max_precision, accepted));
  }
}

void check_hypotheses_usable(const PropertyInfo& info, const CheckOptions& options) {
  const auto refuse = [&](const std::string& option) {
    throw InvalidArgument(fmt::format(
        "{}: property {} draws no models, so it has no summation or format draw to set; {} "
        "applies only to nope-ltlp and rope-p-ltlpmod",
        option, info.name, option));
  };
  if (!info.draws_models) {
    if (options.summation) refuse("--summation");
    if (options.draw) refuse("--draw");
    return;
  }
  if (options.draw != ConverseDraw::reachable) return;
  if (options.format) {
    throw InvalidArgument(fmt::format(
        "--draw reachable draws its own formats (p 3-8, 3-4 exponent bits, so that n* is within "
        "--max-length); give --format '{}' or --draw reachable, not both",
        options.format->name));
  }
  if (options.summation && *options.summation != numeric::Summation::exact &&
      *options.summation != numeric::Summation::sequential) {
    throw InvalidArgument(fmt::format(
        "--draw reachable needs n* from the eventual-behaviour analysis, which covers --summation "
        "exact and sequential only (got {})",
        numeric::to_string(*options.summation)));
  }
}

PropertyOutcome run_property(const std::string& name, const CheckOptions& options,
                             const CheckProgress& progress) {
  const Theorem* theorem = nullptr;
  for (const auto& t : theorems()) {
    if (t.info.name == name) theorem = &t;
  }
  if (theorem == nullptr) {
    std::vector<std::string> names;
    for (const auto& t : theorems()) names.push_back(t.info.name);
    throw InvalidArgument(fmt::format("unknown property '{}'{}; accepted: all, {}", name,
                                      ropesim::did_you_mean(name, names), property_names()));
  }
  return run_theorem(*theorem, options, progress);
}

PropertyOutcome run_theorem(const Theorem& theorem_ref, const CheckOptions& options,
                            const CheckProgress& progress) {
  const Theorem* theorem = &theorem_ref;
  const std::string& name = theorem->info.name;
  if (options.trials < 1) throw InvalidArgument("--trials must be at least 1");
  if (options.max_length < 1) throw InvalidArgument("--max-length must be at least 1");
  if (options.max_size < 1) throw InvalidArgument("--max-size must be at least 1");
  if (options.format) check_format_usable(theorem->info, *options.format);
  check_hypotheses_usable(theorem->info, options);

  rc::detail::TestParams params;
  params.seed = options.seed;
  params.maxSuccess = options.trials;
  params.maxSize = options.max_size;
  params.maxDiscardRatio = 10;
  rc::detail::TestMetadata metadata;
  metadata.id = name;
  metadata.description = theorem->info.statement;
  std::unordered_map<std::string, rc::detail::Reproduce> reproduce;
  if (!options.replay.empty()) reproduce.emplace(name, decode_replay(options.replay));

  ProgressListener listener(name, options.trials, progress);
  const auto body = theorem->body;
  const auto start = std::chrono::steady_clock::now();
  const auto result =
      rc::detail::checkProperty(rc::detail::toProperty([&options, body] { body(options); }),
                                metadata, params, listener, reproduce);
  PropertyOutcome outcome;
  outcome.name = name;
  outcome.discarded = listener.discarded();
  outcome.thresholds = listener.thresholds();
  converse_record().reset();
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (result.match(success)) {
    outcome.passed = success.numSuccess;
  } else if (result.match(failure)) {
    outcome.passed = failure.numSuccess;
    outcome.failed = true;
    outcome.description = tidy_description(failure.description);
    for (const auto& [type, value] : failure.counterExample) {
      outcome.counterexample.push_back(fmt::format("{}: {}", type, value));
    }
    outcome.replay_command = replay_command(name, options, encode_replay(failure.reproduce));
  } else if (result.match(gave_up)) {
    outcome.passed = gave_up.numSuccess;
    outcome.gave_up = true;
    outcome.description = gave_up.description;
  } else if (result.match(error)) {
    outcome.failed = true;
    outcome.description = error.description;
  }
  return outcome;
}

}  // namespace ropesim::properties
