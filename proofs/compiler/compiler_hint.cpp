#include "proofs/compiler/compiler_hint.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "numeric/format.hpp"

namespace ropesim::proofs {

const std::vector<std::string>& compiler_preset_formats() {
  // the named formats (numeric::named_formats) by size_rank
  static const std::vector<std::string> presets = [] {
    std::vector<numeric::NamedFormat> rows(numeric::named_formats().begin(),
                                           numeric::named_formats().end());
    std::sort(rows.begin(), rows.end(),
              [](const auto& a, const auto& b) { return a.size_rank < b.size_rank; });
    std::vector<std::string> names;
    for (const auto& row : rows) names.emplace_back(row.name);
    return names;
  }();
  return presets;
}

Refusal with_format_hint(const Refusal& refusal, const CompileOptions& options,
                         const std::function<CompiledModel(const CompileOptions&)>& compile_in) {
  // Refusals that no format can fix are passed on unchanged.
  if (refusal.reason() == RefusalReason::input || refusal.reason() == RefusalReason::summation ||
      refusal.reason() == RefusalReason::mod_period)
    return refusal;
  const std::string message = refusal.what();
  CompileOptions trial = options;
  trial.suggest_format = false;
  trial.progress = {};
  // With Y^k heads a format is only as good as its certified length (THEORY §6): rank every
  // preset that compiles by it (longest first), e.g. 'Y^50 a' refused in fp16 (N_max 43) is
  // certified to 51 in fp8e4m3 but to 709 in fp32. Without them, the smallest preset.
  // The trial scans stop at kHintScanLength: a length at that cap is shown as ">= cap".
  constexpr std::uint64_t kHintScanLength = 2000;
  trial.offset_max_length = kHintScanLength;
  std::vector<std::pair<std::string, std::optional<std::uint64_t>>> ranked;
  std::set<std::string> at_cap;
  bool bounded = false;
  for (const std::string& preset : compiler_preset_formats()) {
    trial.policy.format = numeric::parse_format(preset);
    if (trial.policy.format.name == options.policy.format.name) continue;
    try {
      const CompiledModel c = compile_in(trial);
      bounded = bounded || !c.bounded_heads.empty();
      ranked.emplace_back(preset, c.certified_length);
      for (const auto& b : c.bounded_heads) {
        if (b.at_limit && c.certified_length == b.n_max) at_cap.insert(preset);
      }
    } catch (const InvalidArgument&) {
      continue;
    }
    if (!bounded) {
      return Refusal(refusal.reason(),
                     message + "; the smallest preset format that compiles it is " + preset);
    }
  }
  if (!ranked.empty()) {
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& x, const auto& y) {
      const std::uint64_t a = x.second.value_or(UINT64_MAX), b = y.second.value_or(UINT64_MAX);
      return a > b;
    });
    std::string list;
    for (const auto& [preset, length] : ranked) {
      list += (list.empty() ? "" : ", ") + preset + " (" +
              (at_cap.count(preset) != 0 ? ">= " : "") +
              (length ? std::to_string(*length) : std::string("unbounded")) + ")";
    }
    return Refusal(refusal.reason(),
                   message + "; the preset formats that compile it, by certified length: " + list);
  }
  return Refusal(refusal.reason(), message + "; no preset format compiles it under rounding " +
                                       std::string(numeric::to_string(options.policy.rounding)));
}

}  // namespace ropesim::proofs
