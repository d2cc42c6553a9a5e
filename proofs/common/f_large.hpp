#pragma once
/// f_large(F) for the heads that need it, or the one refusal when it is undefined (THEORY §1).
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "numeric/format.hpp"
#include "numeric/rounding.hpp"
#include "numeric/value.hpp"

namespace ropesim::proofs {

/// The input that makes f_large(F) undefined (THEORY §1).
enum class FLargeCause {
  rounding,  ///< upward rounding: exp(−f) never rounds up to 0
  format,    ///< F's range is too small: exp(−max) does not round to 0
};

/// Thrown by require_f_large: an InvalidArgument whose message is the one-line reason and
/// whose cause() says which input to change (the CLI names the flag from it).
class FLargeUndefined : public InvalidArgument {
 public:
  FLargeUndefined(FLargeCause cause, const std::string& message)
      : InvalidArgument(message), cause_(cause) {}
  FLargeCause cause() const { return cause_; }

 private:
  FLargeCause cause_;
};

/// f_large(F) under `rounding` (THEORY §1: the smallest positive f in F with
/// round_F(exp(−f)) = 0), which every fixed-offset head, MOD atom, P head and horizon needs.
/// Throws FLargeUndefined when none exists: under upward rounding (cause rounding) "f_large(F) is
/// undefined under rounding R (exp(-f) never rounds up to 0; THEORY §1); use nearest-even,
/// nearest-away, toward-zero or downward", otherwise (cause format) "f_large(F) is undefined:
/// exp(-max) does not round to 0 in F (its range is too small ...); use a format with a wider
/// range, e.g. fp16, bf16, fp32". `rounding_name` is the spelling of R echoed in the message
/// (empty: numeric::to_string(rounding)). The one place this refusal is written: callers that
/// report a Refusal (the compiler) rethrow its message.
numeric::Value require_f_large(const numeric::Format& format, numeric::Rounding rounding,
                               std::string_view rounding_name = {});

}  // namespace ropesim::proofs
