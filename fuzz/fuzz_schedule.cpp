// attention::parse_schedule: the canonical spec of a parsed schedule parses back to the same
// schedule (schedule.hpp), compared through its metadata JSON (every block's exact angle).
#include "attention/schedule.hpp"
#include "fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    using ropesim::fuzz::require;
    const auto s = ropesim::attention::parse_schedule(text);
    require(s.dimension() == s.head_dim, "head_dim != 2·(blocks + unrotated pairs)");
    require(s.rotary_dim == 2 * s.blocks.size(), "rotary_dim != 2·blocks");
    const auto again = ropesim::attention::parse_schedule(s.spec);
    require(again.spec == s.spec, "spec '" + s.spec + "' is not stable: '" + again.spec + "'");
    require(to_json(again) == to_json(s), "spec '" + s.spec + "' parses to a different schedule");
  });
}
