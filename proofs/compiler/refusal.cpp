#include "proofs/compiler/refusal.hpp"

#include "core/enum_names.hpp"
namespace ropesim::proofs {

namespace {

constexpr ropesim::Spelling<RefusalReason> refusal_reason_names[] = {
    {RefusalReason::input, "input"},
    {RefusalReason::summation, "summation"},
    {RefusalReason::no_f_large, "no_f_large"},
    {RefusalReason::exact_constant, "exact_constant"},
    {RefusalReason::past_head, "past_head"},
    {RefusalReason::offset_head, "offset_head"},
    {RefusalReason::mod_margin, "mod_margin"},
    {RefusalReason::mod_schedule, "mod_schedule"},
    {RefusalReason::mod_period, "mod_period"},
    {RefusalReason::layer_norm_gain, "layer_norm_gain"},
    {RefusalReason::layer_norm_mirror, "layer_norm_mirror"}};
constexpr ropesim::EnumNames<RefusalReason> refusal_reason_table{.what = "refusal reason",
                                                                 .names = refusal_reason_names};

}  // namespace

std::string_view to_string(RefusalReason reason) {
  return ropesim::name_of(refusal_reason_table, reason);
}

}  // namespace ropesim::proofs
