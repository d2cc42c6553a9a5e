// Realised rotations: realise, realise_block, apply_rotation and the position tuples
// (THEORY §2.1, §3; attention/realisations/realisation.hpp). Parsing is in realisation_parse.cpp,
// the per-position report in position_report.cpp, the evaluation in attention/detail/.
#include "attention/realisations/realisation.hpp"

#include <algorithm>

#include "attention/detail/evaluator.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"

namespace ropesim::attention {

namespace detail {

// evaluator.hpp: realise_block_at
RealisedPair realise_block_at(const Schedule& s, const Realisation& r, std::size_t b,
                              const PositionTuple& p, detail::Steps* steps,
                              std::uint8_t* constant_flags) {
  const RotaryBlock& block = s.blocks[b];
  if (block.axis_angles.size() > 1) {
    if (constant_flags != nullptr) *constant_flags = 0;
    return detail::evaluate_mixed(block, r, p, s.position_axes, steps);
  }
  const std::uint64_t q = block.axis_angles.empty() ? 0 : p[block.axis_angles.front().axis];
  const std::vector<Realisation> members{r};
  detail::BlockEvaluator ev(s, b, members, r.arithmetic_engine());
  const RealisedPair out = ev.evaluate_one(0, q, steps);
  if (constant_flags != nullptr) *constant_flags = ev.constant_flags(0);
  return out;
}

}  // namespace detail

std::uint8_t RealisedRotation::flags() const {
  std::uint8_t f = 0;
  for (const auto& b : blocks) f |= b.flags;
  return f;
}

PositionTuple position_tuple(const Schedule& s, std::uint64_t i) {
  return PositionTuple(s.is_multi_axis() ? s.position_axes.size() : 1, i);
}

void check_position(const Schedule& s, const PositionTuple& p) {
  const std::size_t k = s.is_multi_axis() ? s.position_axes.size() : 1;
  if (p.size() != k) {
    std::string names = "one scalar position";
    if (s.is_multi_axis()) {
      names = "(";
      for (std::size_t a = 0; a < k; ++a) names += (a ? "," : "") + s.position_axes[a];
      names += ") or one scalar i = (i, ..., i)";
    }
    throw InvalidArgument("position " + to_string(p) + " has " + std::to_string(p.size()) +
                          " coordinates, schedule '" + s.spec + "' takes " + std::to_string(k) +
                          "; accepted: " + names);
  }
  for (const auto c : p) {
    if (c > (std::uint64_t{1} << 63) - 1) {
      throw InvalidArgument("position " + to_string(p) + ": coordinates must be ≤ 2^63 - 1");
    }
  }
}

PositionTuple parse_position_tuple(std::string_view text) {
  std::string_view body = text;
  const auto bad = [&]() {
    throw InvalidArgument("bad position '" + std::string(text) +
                          "'; accepted: i, (t,h,w) or t,h,w with integers 0..2^63-1");
  };
  if (!body.empty() && body.front() == '(') {
    if (body.back() != ')') bad();
    body = body.substr(1, body.size() - 2);
  }
  PositionTuple out;
  std::vector<std::string> items;
  try {
    items = ropesim::split_items(body, ',', "position");
  } catch (const InvalidArgument&) {
    bad();
  }
  for (std::string item : items) {
    while (!item.empty() && item.front() == ' ') item.erase(item.begin());
    if (item.empty() || item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 19)
      bad();
    const mpz_class v(item);
    if (v > mpz_class("9223372036854775807")) bad();
    out.push_back(std::stoull(item));
  }
  if (out.empty()) bad();
  return out;
}

std::string to_string(const PositionTuple& p) {
  if (p.size() == 1) return std::to_string(p[0]);
  std::string out = "(";
  for (std::size_t a = 0; a < p.size(); ++a) out += (a ? "," : "") + std::to_string(p[a]);
  return out + ")";
}

namespace {

/// The fields of a realised rotation that do not depend on the position.
RealisedRotation rotation_frame(const Schedule& s, const Realisation& r) {
  RealisedRotation rot;
  rot.unrotated_pairs = s.unrotated_pairs;
  rot.rounding = r.rounding;
  if (r.kind == Realisation::Kind::pipeline) {
    rot.rotation_format = r.steps.rotation.compute;
    rot.output_format = r.steps.output;
    rot.arithmetic = r.steps.arithmetic;
    rot.rounding = r.steps.rotation.rounding_or(r.rounding);
  } else {
    rot.rotation_format = r.format;
    rot.output_format = r.format;
    rot.arithmetic = RotationArithmetic::theory;
  }
  return rot;
}

}  // namespace

RealisedRotation realise(const Schedule& s, const Realisation& r, std::uint64_t position) {
  if (s.is_multi_axis()) {
    RealisedRotation rot = realise(s, r, position_tuple(s, position));
    rot.position = position;
    return rot;
  }
  check_applicable(s, r);
  RealisedRotation rot = rotation_frame(s, r);
  rot.position = position;
  const std::vector<Realisation> members{r};
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    detail::BlockEvaluator ev(s, b, members, r.arithmetic_engine());
    rot.blocks.push_back(ev.evaluate_one(0, position, nullptr));
  }
  return rot;
}

RealisedRotation realise(const Schedule& s, const Realisation& r, const PositionTuple& position) {
  check_position(s, position);
  if (!s.is_multi_axis()) return realise(s, r, position.front());
  check_applicable(s, r);
  RealisedRotation rot = rotation_frame(s, r);
  rot.tuple = position;
  const bool diagonal = std::all_of(position.begin(), position.end(),
                                    [&](std::uint64_t c) { return c == position.front(); });
  rot.position = diagonal ? position.front() : 0;
  for (std::size_t b = 0; b < s.blocks.size(); ++b) {
    rot.blocks.push_back(detail::realise_block_at(s, r, b, position, nullptr, nullptr));
  }
  return rot;
}

std::vector<RealisedPair> realise_block(const Schedule& s, const Realisation& r, std::size_t block,
                                        std::uint64_t begin, std::uint64_t end) {
  check_applicable(s, r);
  if (end < begin) {
    throw InvalidArgument("realise_block: end " + std::to_string(end) + " < begin " +
                          std::to_string(begin));
  }
  if (block < s.blocks.size() && s.blocks[block].axis_angles.size() > 1) {
    // a block mixing axes, on the diagonal (i, ..., i): per position, its angle per axis
    std::vector<RealisedPair> out;
    out.reserve(end - begin);
    for (std::uint64_t i = begin; i < end; ++i) {
      out.push_back(detail::evaluate_mixed(s.blocks[block], r, position_tuple(s, i),
                                           s.position_axes, nullptr));
    }
    return out;
  }
  const std::vector<Realisation> members{r};
  detail::BlockEvaluator ev(s, block, members, r.arithmetic_engine());
  std::vector<std::vector<RealisedPair>> out;
  ev.evaluate(begin, end, out);
  return std::move(out[0]);
}

std::vector<Value> apply_rotation(const RealisedRotation& rot, std::span<const Value> x,
                                  PairLayout layout, const numeric::Engine& engine) {
  const std::size_t nb = rot.blocks.size();
  const std::size_t dim = 2 * (nb + rot.unrotated_pairs);
  if (x.size() != dim) {
    throw InvalidArgument("apply_rotation: vector has " + std::to_string(x.size()) +
                          " coordinates, the rotation needs " + std::to_string(dim));
  }
  const Format& f = rot.rotation_format;
  const Format& out_f = rot.output_format;
  const Rounding rd = rot.rounding;
  std::vector<Value> y(x.begin(), x.end());
  for (std::size_t d = 0; d < nb; ++d) {
    const std::size_t i0 = layout == PairLayout::adjacent ? 2 * d : d;
    const std::size_t i1 = layout == PairLayout::adjacent ? 2 * d + 1 : d + nb;
    const Value x0 = engine.convert(f, x[i0], rd), x1 = engine.convert(f, x[i1], rd);
    const Value c = engine.convert(f, rot.blocks[d].cos, rd);
    const Value s = engine.convert(f, rot.blocks[d].sin, rd);
    Value y0, y1;
    if (rot.arithmetic == RotationArithmetic::theory) {
      // THEORY §2.1: (rnd(rnd(c·x0) - rnd(s·x1)), rnd(rnd(s·x0) + rnd(c·x1)))
      y0 = engine.sub(f, engine.mul(f, c, x0, rd), engine.mul(f, s, x1, rd), rd);
      y1 = engine.add(f, engine.mul(f, s, x0, rd), engine.mul(f, c, x1, rd), rd);
    } else {
      // HF eager q·cos + rotate_half(q)·sin, rotate_half(q) = (-x1, x0) on the pair
      y0 = engine.add(f, engine.mul(f, x0, c, rd), engine.mul(f, numeric::negate(x1), s, rd), rd);
      y1 = engine.add(f, engine.mul(f, x1, c, rd), engine.mul(f, x0, s, rd), rd);
    }
    y[i0] = out_f == f ? y0 : engine.convert(out_f, y0, rd);
    y[i1] = out_f == f ? y1 : engine.convert(out_f, y1, rd);
  }
  return y;
}

}  // namespace ropesim::attention
