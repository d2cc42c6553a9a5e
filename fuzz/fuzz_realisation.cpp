// attention::parse_realisation, r1-r3, the named pipelines and `pipeline:KEY=VALUE;...`
// specs: the name of a parsed realisation parses back to an equal realisation
// (realisation.hpp). The first input byte picks the format F / activation format A and the
// rounding; the rest is the spec.
#include "attention/realisations/realisation.hpp"
#include "fuzz/fuzz.hpp"

namespace {

using ropesim::attention::Realisation;
using ropesim::numeric::Format;
using ropesim::numeric::Rounding;

bool same(const Realisation& a, const Realisation& b) {
  return a.kind == b.kind && a.format == b.format && a.rounding == b.rounding &&
         a.layout == b.layout && (a.kind != Realisation::Kind::pipeline || a.steps == b.steps);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const Format formats[] = {Format::fp32(),       Format::bf16(),
                                   Format::fp16(),       Format::fp8e4m3(),
                                   Format::fixed(3, 12), Format::custom(24, -30, 30)};
  static const Rounding roundings[] = {Rounding::nearest_even, Rounding::nearest_away,
                                       Rounding::toward_zero, Rounding::upward, Rounding::downward};
  const Format& format = formats[data[0] % std::size(formats)];
  const Rounding rounding = roundings[(data[0] / std::size(formats)) % std::size(roundings)];
  return ropesim::fuzz::run(data + 1, size - 1, [&](std::string_view text) {
    const auto r = ropesim::attention::parse_realisation(text, format, rounding);
    const std::string name = r.name();
    const auto again = ropesim::attention::parse_realisation(name, format, rounding);
    ropesim::fuzz::require(same(again, r), "name '" + name + "' parses to a different realisation");
    ropesim::fuzz::require(again.name() == name, "name '" + name + "' is not stable");
    (void)r.table_format();
  });
}
