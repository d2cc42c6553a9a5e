#pragma once
/// Why a construction refused a format, as a type: callers (the properties, the CLI's hints)
/// act on the reason, never on the message text (THEORY §7).
#include <string>
#include <string_view>

#include "core/error.hpp"

namespace ropesim::proofs {

/// The reasons the compiler and the MOD/offset constructions refuse (THEORY §7).
enum class RefusalReason {
  input,              ///< the formula or alphabet itself (S, an empty or repeated alphabet):
                      ///< no format can fix it
  summation,          ///< not sequential summation: the certificates assume it (THEORY §2.1)
  no_f_large,         ///< f_large(F) is undefined under the rounding (THEORY §1)
  exact_constant,     ///< a gadget constant (f1, f2, 1/(f2 − f1)) is not exact in F (C1)
  past_head,          ///< a P head's re-binarisation is not exactly 1/0 in F (C1 Patch 2)
  offset_head,        ///< a Y^k head's certified range N_max^(k) < k in F (THEORY §6)
  mod_margin,         ///< a MOD_m^r atom's realised margins: no C makes every residue's
                      ///< winner lead by f_large in F (C4)
  mod_schedule,       ///< a MOD_m^r atom under a non-periodic schedule: no block of the
                      ///< schedule certifies a range N_max^MOD ≥ 2m in F (C4')
  mod_period,         ///< a MOD_m^r atom under a periodic schedule without a block of turn
                      ///< 1/m (C4): no format can fix it
  layer_norm_gain,    ///< the LayerNorm mirror's raw scale 2^−p or gain 2^(p−1) is not in F
  layer_norm_mirror,  ///< any other check of the LayerNorm mirror (post-LN, C1)
};

/// "mod_margin", … (the enumerator's name).
std::string_view to_string(RefusalReason reason);

/// A refusal with its reason; the message is the one line the CLI prints.
class Refusal : public InvalidArgument {
 public:
  Refusal(RefusalReason reason, const std::string& message)
      : InvalidArgument(message), reason_(reason) {}
  [[nodiscard]] RefusalReason reason() const { return reason_; }

 private:
  RefusalReason reason_;
};

}  // namespace ropesim::proofs
