#include "proofs/refusal.hpp"

namespace ropesim::proofs {

std::string_view to_string(RefusalReason reason) {
  switch (reason) {
    case RefusalReason::input:
      return "input";
    case RefusalReason::summation:
      return "summation";
    case RefusalReason::no_f_large:
      return "no_f_large";
    case RefusalReason::exact_constant:
      return "exact_constant";
    case RefusalReason::past_head:
      return "past_head";
    case RefusalReason::offset_head:
      return "offset_head";
    case RefusalReason::mod_margin:
      return "mod_margin";
    case RefusalReason::mod_schedule:
      return "mod_schedule";
    case RefusalReason::layer_norm_gain:
      return "layer_norm_gain";
    case RefusalReason::layer_norm_mirror:
      return "layer_norm_mirror";
  }
  return "unknown";
}

}  // namespace ropesim::proofs
