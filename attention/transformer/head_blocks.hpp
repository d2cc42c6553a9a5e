#pragma once
/// Helpers shared by head.cpp and model_validation.cpp: the rotary blocks of a head's segments.
#include <cstddef>

#include "attention/transformer/transformer.hpp"

namespace ropesim::attention::detail {

/// The schedule restricted to block b (keeps the metadata pipelines need).
inline Schedule block_schedule(const Schedule& s, std::size_t b) {
  Schedule sub = s;
  sub.blocks = {s.blocks[b]};
  sub.unrotated_pairs = 0;
  sub.rotary_dim = 2;
  sub.head_dim = 2;
  return sub;
}

inline std::size_t rotary_block_count(const AttentionHead& head) {
  std::size_t n = 0;
  for (const auto& seg : head.rotary) n += seg.schedule.blocks.size();
  return n;
}

}  // namespace ropesim::attention::detail
