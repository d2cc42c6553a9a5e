#include "proofs/experiments/separation.hpp"

#include "attention/schedules/schedule.hpp"

namespace ropesim::proofs {

std::vector<SeparationLanguage> separation_languages() {
  return {{"(aa)*", "mod(2,1)", {"a"}, "periodic:m=2"},
          {"(ab)*", "mod(2,1) & !P(mod(2,1) & !a | mod(2,0) & !b)", {"a", "b"}, "periodic:m=2"},
          {"MOD_3", "mod(3,1)", {"a", "b"}, "periodic:m=3"},
          {"Sigma*a", "Y a", {"a", "b"}, "periodic:m=4"}};
}

std::vector<SeparationSeries> separation_experiment(const SeparationSpec& spec,
                                                    const LengthProgress& progress) {
  const std::vector<SeparationLanguage> languages = separation_languages();
  const std::size_t per_language = spec.schedules.size() * spec.experiment.formats.size();
  const std::size_t total = languages.size() * per_language;
  std::vector<SeparationSeries> out;
  for (const SeparationLanguage& language : languages) {
    LengthExperimentSpec e = spec.experiment;
    e.formula = language.formula;
    e.alphabet = language.alphabet;
    e.schedule_for_mod = true;
    e.schedules.clear();
    for (const std::string& s : spec.schedules)
      e.schedules.push_back(attention::parse_schedule(s == "periodic" ? language.periodic : s));
    const std::size_t before = out.size();
    const auto series = length_experiment(e, [&](std::size_t done, std::size_t) {
      if (progress) progress(before + done, total);
    });
    for (const LengthSeries& s : series) out.push_back({language.name, s});
  }
  return out;
}

}  // namespace ropesim::proofs
