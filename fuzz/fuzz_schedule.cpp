// attention::parse_schedule: the canonical spec of a parsed schedule parses back to the same
// schedule (schedule.hpp): the same metadata and, block by block, the same exact angle, turn and
// flags. (Not via to_json: its nearest-double angles cost an MPFR evaluation per block, and a
// valid dim=1000000 has 500 000 blocks.)
#include "attention/schedules/schedule.hpp"
#include "fuzz/fuzz.hpp"

namespace {

using ropesim::attention::RotaryBlock;
using ropesim::attention::Schedule;

bool same_block(const RotaryBlock& a, const RotaryBlock& b) {
  return a.index == b.index && a.frequency_index == b.frequency_index && a.dropped == b.dropped &&
         a.turn.has_value() == b.turn.has_value() &&
         (!a.turn || (a.turn->a == b.turn->a && a.turn->m == b.turn->m)) &&
         a.theta.to_string() == b.theta.to_string();
}

bool same(const Schedule& a, const Schedule& b) {
  if (a.spec != b.spec || a.kind != b.kind || a.unrotated_pairs != b.unrotated_pairs ||
      a.head_dim != b.head_dim || a.rotary_dim != b.rotary_dim || a.base != b.base ||
      a.exponent_dim != b.exponent_dim || a.partial_rotary_factor != b.partial_rotary_factor ||
      a.prope_p != b.prope_p || a.llama3.has_value() != b.llama3.has_value() ||
      a.max_position_embeddings != b.max_position_embeddings ||
      a.blocks.size() != b.blocks.size()) {
    return false;
  }
  for (std::size_t k = 0; k < a.blocks.size(); ++k) {
    if (!same_block(a.blocks[k], b.blocks[k])) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    using ropesim::fuzz::require;
    const auto s = ropesim::attention::parse_schedule(text);
    require(s.dimension() == s.head_dim, "head_dim != 2·(blocks + unrotated pairs)");
    require(s.rotary_dim == 2 * s.blocks.size(), "rotary_dim != 2·blocks");
    const auto again = ropesim::attention::parse_schedule(s.spec);
    require(again.spec == s.spec, "spec '" + s.spec + "' is not stable: '" + again.spec + "'");
    require(same(again, s), "spec '" + s.spec + "' parses to a different schedule");
  });
}
