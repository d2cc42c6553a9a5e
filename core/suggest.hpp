#pragma once
/// "Did you mean": the one helper every name lookup that refuses uses (formats, model presets,
/// framework presets, realisations, schedule kinds, rope types, properties, commands), so a
/// mistyped name is answered with the nearest accepted ones.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ropesim {

/// The optimal-string-alignment distance between a and b, ignoring ASCII case: the fewest
/// insertions, deletions, substitutions and transpositions of adjacent characters that turn
/// one into the other ("fp61" → "fp16" is 1, "lama2-7b" → "llama2-7b" is 1).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The names of `names` nearest to `given`, best first, at most 3: those at the smallest edit
/// distance when it is at most max(1, min(3, |given| / 3)) (a typo, not another word), else
/// those that start with `given` or contain it (|given| ≥ 3: "llama2" → "llama2-7b"). Empty
/// when none is close or `given` is itself a name.
std::vector<std::string> nearest_names(std::string_view given,
                                       const std::vector<std::string>& names);

/// " (did you mean 'x'?)" or " (did you mean 'x', 'y' or 'z'?)" for nearest_names, or "" when
/// none: ready to append to a refusal before its "; accepted: ..." list.
std::string did_you_mean(std::string_view given, const std::vector<std::string>& names);
/// The same for a list of views.
std::string did_you_mean(std::string_view given, const std::vector<std::string_view>& names);

}  // namespace ropesim
