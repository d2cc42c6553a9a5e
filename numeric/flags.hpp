#pragma once
/// IEEE 754 exception flags (IEEE 754-2019 §7), as ropesim's arithmetic reports them: the one
/// flag type of ropesim. Realised rotations record the same bits per position (overflow: some
/// step overflowed; invalid: some step produced NaN), stored as Flags::bits() in one byte.
#include <cstdint>
#include <string>

namespace ropesim::numeric {

/// The five IEEE 754-2019 exceptions (§7.2–7.6), as bits of a Flags set. The bit values are
/// part of the interface: overflow = 1 and invalid = 2 are the "1 overflow, 2 NaN" of realised
/// rotations' flag bytes (Python's rotation_table), and round_values returns these bits.
enum class Flag : std::uint8_t {
  /// §7.4: the result rounded as if the exponent range were unbounded (same precision p, same
  /// rounding direction; for fixed point: the same grid 2^-F extended without bound) exceeds
  /// the largest finite element in magnitude ("overflow after rounding"). The delivered
  /// result is ±∞ or ±max finite as the format and the direction say.
  overflow = 1,
  /// §7.2: no usefully definable result (0·∞, ∞ − ∞, 0/0, ∞/∞, √x or log x for x < 0,
  /// cos/sin of ∞); the result is NaN (or, in a format without NaN, whatever it defines).
  invalid = 2,
  /// §7.3: an exact infinite result from finite operands (x/0 for x ≠ 0, log ±0).
  division_by_zero = 4,
  /// §7.5, tininess detected after rounding (the choice x86 SSE/AVX and ARMv8 make for binary
  /// formats; IEEE leaves it to the implementation): the non-zero result rounded with an
  /// unbounded exponent range lies strictly between ±2^emin, and the delivered result is
  /// inexact. Never raised for fixed point (it has no exponent).
  underflow = 8,
  /// §7.6: the delivered result differs from the exact one (overflow implies it).
  inexact = 16,
};

/// A set of IEEE exception flags. Like IEEE status flags they are sticky: operations that
/// take a `Flags&` raise flags into it and never lower them.
class Flags {
 public:
  constexpr Flags() = default;
  constexpr Flags(Flag flag)
      : bits_(static_cast<std::uint8_t>(flag)) {}  // NOLINT: implicit on purpose
  /// The set whose bits() are `bits` (a flag byte stored by a realisation); bits outside the
  /// five flags are dropped.
  static constexpr Flags from_bits(std::uint8_t bits) {
    Flags f;
    f.bits_ = static_cast<std::uint8_t>(bits & 31);
    return f;
  }

  constexpr bool test(Flag flag) const { return (bits_ & static_cast<std::uint8_t>(flag)) != 0; }
  constexpr bool any() const { return bits_ != 0; }
  constexpr std::uint8_t bits() const { return bits_; }
  constexpr Flags& operator|=(Flags other) {
    bits_ |= other.bits_;
    return *this;
  }
  friend constexpr Flags operator|(Flags a, Flags b) { return a |= b; }
  friend constexpr bool operator==(Flags a, Flags b) = default;

 private:
  std::uint8_t bits_ = 0;
};

/// The raised flags in IEEE's order, comma separated: "invalid,division-by-zero,overflow,
/// underflow,inexact"; "" for none.
std::string to_string(Flags flags);

}  // namespace ropesim::numeric
