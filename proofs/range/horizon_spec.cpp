// Building a horizon spec from the text of its options (see horizon_spec.hpp).
#include "proofs/range/horizon_spec.hpp"

#include <fmt/format.h>

#include <string>

#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "numeric/engine.hpp"
#include "numeric/exact.hpp"
#include "numeric/fast_engine.hpp"
#include "numeric/summation.hpp"
#include "proofs/range/fixed_offset_head.hpp"

namespace ropesim::proofs {

void check_head_blocks(const std::string& schedule, std::size_t blocks, bool allow_slow) {
  if (blocks <= kHorizonQuickBlocks || allow_slow) return;
  throw InvalidArgument(fmt::format(
      "--schedule: '{}' has {} rotary blocks, beyond the quick limit of {} (head dimension {}; "
      "real models' heads have at most 256 dimensions): its setup alone takes minutes; pass "
      "--allow-slow to run it anyway",
      schedule, blocks, kHorizonQuickBlocks, 2 * kHorizonQuickBlocks));
}

void check_head_source(bool g_given, const std::optional<std::string>& schedule) {
  if (schedule && schedule->empty()) {
    // an empty --schedule is a bad spec (refused as by the other commands), not "no schedule"
    with_context("--schedule", [] { return attention::parse_schedule(""); });
  }
  if (schedule && !schedule->empty() && g_given) {
    throw InvalidArgument("--g: give either --g (one frequency) or --schedule (several), not both");
  }
}

HorizonSpec horizon_spec(const HorizonArguments& a) {
  HorizonSpec spec;
  auto& policy = spec.head.policy;
  policy.engine = with_context("--engine", [&] { return &numeric::engine_by_name(a.engine); });
  policy.rounding = with_context("--rounding", [&] { return numeric::parse_rounding(a.rounding); });
  policy.summation =
      with_context("--summation", [&] { return numeric::parse_summation(a.summation); });
  policy.accumulator =
      with_context("--accumulator", [&] { return numeric::parse_format(a.accumulator); });
  policy.format = with_context("--format", [&] { return numeric::parse_format(a.format); });
  if (!a.schedule.empty()) {
    spec.head.schedule =
        with_context("--schedule", [&] { return attention::parse_schedule(a.schedule); });
    if (spec.head.schedule.is_multi_axis()) {
      // the fixed-offset head Y^k along one axis, the other coordinates 0
      if (a.axis.empty()) {
        std::string names;
        for (const auto& n : spec.head.schedule.position_axes)
          names += (names.empty() ? "" : ", ") + n;
        throw InvalidArgument("--axis: '" + a.schedule +
                              "' has tuple positions; accepted: one of " + names);
      }
      spec.head.schedule = with_context("--axis", [&] {
        return attention::along_axis(spec.head.schedule, spec.head.schedule.axis_index(a.axis));
      });
    } else if (!a.axis.empty()) {
      throw InvalidArgument("--axis: '" + a.schedule +
                            "' has scalar positions; accepted: no --axis for it");
    }
    if (spec.head.schedule.blocks.empty()) {
      throw InvalidArgument("--schedule: '" + a.schedule + "' has no rotary block");
    }
    check_head_blocks(a.schedule, spec.head.schedule.blocks.size(), a.allow_slow);
  } else {
    const mpq_class g =
        with_context("--g", [&] { return numeric::parse_rational_exact(a.g, "g"); });
    if (sgn(g) <= 0) throw InvalidArgument("--g: the frequency g must be positive, got " + a.g);
    spec.head.schedule = attention::single_schedule(g);
  }
  spec.head.k = ropesim::parse_integer(a.k, "--k", 1, 1000000);  // the offset k
  spec.head.realisation = a.realisation;
  const auto realisation = with_context(
      "--realization", [&] { return attention::parse_realisation(a.realisation, policy); });
  with_context("--realization", [&] {
    attention::check_applicable(spec.head.schedule, realisation);
    return 0;
  });
  try {
    require_f_large(policy.format, policy.rounding, a.rounding);
  } catch (const FLargeUndefined& e) {
    const char* flag = e.cause() == FLargeCause::rounding ? "--rounding: " : "--format: ";
    throw InvalidArgument(flag + std::string(e.what()));
  }
  if (a.C == "auto") {
    spec.auto_C = true;
  } else {
    spec.head.C = with_context("--C", [&] { return numeric::parse_rational_exact(a.C, "C"); });
    if (sgn(spec.head.C) <= 0)
      throw InvalidArgument("--C: C must be positive (or 'auto'), got " + a.C);
    with_context("--C", [&] { return require_finite_scale(spec.head.C, policy, a.C); });
  }
  spec.algorithm = with_context("--algorithm", [&] { return parse_range_algorithm(a.algorithm); });
  // The algorithm and its reasonable length for this head (the head with C = 1 for C = auto).
  FixedOffsetSpec probe = spec.head;
  if (spec.auto_C) probe.C = 1;
  const auto head = with_context("--C", [&] { return make_fixed_offset_head(probe); });
  const auto algorithm =
      with_context("--algorithm", [&] { return resolve_range_algorithm(spec.algorithm, head); });
  spec.max_length = with_context("--max-length", [&] {
    return horizon_max_length(algorithm, head, a.max_length, a.allow_slow, a.threads, spec.auto_C,
                              spec.slack, &spec.estimate);
  });
  return spec;
}

}  // namespace ropesim::proofs
