#pragma once
/// The seed's separation as one experiment (THEORY §5, §7 C4 and C4', §8; RoPE-X §5–6): periodic
/// RoPE recognises LTL[P,MOD] at every length, conventional RoPE only simulates a bounded
/// look-back (Y^k up to N_max^(k)) and a bounded MOD (up to N_max^MOD, or not at all). The
/// languages (aa)*, (ab)*, MOD_3 (|w| ≡ 0 mod 3) and Σ*a are each compiled under every
/// schedule named — "periodic" standing for the language's own periodic schedule — and every
/// format, and measured by length_experiment (balanced members / non-members per length).
/// NoPE applies to none of them: none is in LTL[P] (T1; (aa)*, (ab)*, MOD_3 are not R-trivial,
/// Σ*a's minimal DFA has a cycle through two states).
#include <string>
#include <vector>

#include "proofs/experiments/length_experiment.hpp"

namespace ropesim::proofs {

/// One language of the separation.
struct SeparationLanguage {
  std::string name;                   ///< e.g. "(ab)*"
  std::string formula;                ///< its LTL[P,MOD,Y] formula (THEORY §4)
  std::vector<std::string> alphabet;  ///< its alphabet
  std::string periodic;               ///< the schedule "periodic" means for it
};

/// (aa)* = mod(2,1) over {a}; (ab)* = mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b) over {a, b}
/// (THEORY §4, RoPE-X Prop 3.2); MOD_3 = mod(3,1) over {a, b} (the length test N ≡ 0 mod 3 is
/// MOD_3^1 at N + 1); Σ*a = Y a over {a, b}. "periodic" is periodic:m=2, m=2, m=3 and, for
/// Σ*a (not in LTL[P,MOD]: no periodic schedule holds it at every length), periodic:m=4.
std::vector<SeparationLanguage> separation_languages();

/// What to run: the schedules ("periodic" or any spec parse_schedule reads) and the rest of a
/// length experiment (its formula, alphabet and schedules are set per language).
struct SeparationSpec {
  std::vector<std::string> schedules = {"periodic", "llama2-7b", "single:g=1"};
  LengthExperimentSpec experiment;
};

/// One series: the language and its length experiment's series.
struct SeparationSeries {
  std::string language;
  LengthSeries series;
};

/// Runs length_experiment per language (languages outer, then schedules, then formats).
/// `progress` gets (series done, series in all). Throws what parse_schedule and
/// length_experiment throw (an unknown schedule, a bad length list).
std::vector<SeparationSeries> separation_experiment(const SeparationSpec& spec,
                                                    const LengthProgress& progress = {});

}  // namespace ropesim::proofs
