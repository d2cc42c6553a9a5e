#include "logic/fragment.hpp"

#include <algorithm>
#include <vector>

#include "core/enum_names.hpp"

namespace ropesim::ltl {

std::vector<bool> reachable_nodes(const Formula& formula) {
  std::vector<bool> live(formula.size(), false);
  if (formula.size() == 0) return live;
  live[formula.root()] = true;
  for (std::size_t id = formula.size(); id-- > 0;) {
    if (!live[id]) continue;
    const Node& n = formula.node(static_cast<NodeId>(id));
    switch (n.op) {
      case Operator::negation:
      case Operator::past:
      case Operator::yesterday:
        live[n.left] = true;
        break;
      case Operator::conjunction:
      case Operator::disjunction:
      case Operator::since:
        live[n.left] = true;
        live[n.right] = true;
        break;
      default:
        break;
    }
  }
  return live;
}

namespace {

std::size_t nesting(const Formula& formula, bool temporal_only) {
  if (formula.size() == 0) return 0;
  std::vector<std::size_t> d(formula.size(), 0);
  for (std::size_t id = 0; id < formula.size(); ++id) {
    const Node& n = formula.node(static_cast<NodeId>(id));
    std::size_t own = 0;
    std::size_t below = 0;
    switch (n.op) {
      case Operator::symbol:
      case Operator::top:
      case Operator::modulo:
        break;
      case Operator::negation:
        own = temporal_only ? 0 : 1;
        below = d[n.left];
        break;
      case Operator::conjunction:
      case Operator::disjunction:
        own = temporal_only ? 0 : 1;
        below = std::max(d[n.left], d[n.right]);
        break;
      case Operator::past:
      case Operator::yesterday:
        own = 1;
        below = d[n.left];
        break;
      case Operator::since:
        own = 1;
        below = std::max(d[n.left], d[n.right]);
        break;
    }
    d[id] = own + below;
  }
  return d[formula.root()];
}

}  // namespace

Fragment fragment(const Formula& formula) {
  auto live = reachable_nodes(formula);
  bool uses_y = false, uses_s = false, uses_mod = false;
  for (std::size_t id = 0; id < formula.size(); ++id) {
    if (!live[id]) continue;
    switch (formula.node(static_cast<NodeId>(id)).op) {
      case Operator::yesterday:
        uses_y = true;
        break;
      case Operator::since:
        uses_s = true;
        break;
      case Operator::modulo:
        uses_mod = true;
        break;
      default:
        break;
    }
  }
  if (uses_s) return uses_mod ? Fragment::ltl_s_mod : Fragment::ltl_s;
  if (uses_y) return uses_mod ? Fragment::ltl_p_y_mod : Fragment::ltl_p_y;
  return uses_mod ? Fragment::ltl_p_mod : Fragment::ltl_p;
}

namespace {

constexpr ropesim::Spelling<Fragment> fragment_names[] = {
    {Fragment::ltl_p, "LTL[P]"},     {Fragment::ltl_p_mod, "LTL[P,MOD]"},
    {Fragment::ltl_p_y, "LTL[P,Y]"}, {Fragment::ltl_p_y_mod, "LTL[P,Y,MOD]"},
    {Fragment::ltl_s, "LTL"},        {Fragment::ltl_s_mod, "LTL[S,MOD]"}};
constexpr ropesim::EnumNames<Fragment> fragment_table{.what = "fragment", .names = fragment_names};

}  // namespace

std::string_view to_string(Fragment fragment) { return ropesim::name_of(fragment_table, fragment); }

bool within(Fragment inner, Fragment outer) {
  // Operator sets: P ⊂ all; MOD in ltl_p_mod, ltl_p_y_mod, ltl_s_mod; Y in ltl_p_y.. (S gives Y).
  auto has_mod = [](Fragment f) {
    return f == Fragment::ltl_p_mod || f == Fragment::ltl_p_y_mod || f == Fragment::ltl_s_mod;
  };
  auto temporal = [](Fragment f) {  // 0: P only, 1: P and Y, 2: S
    switch (f) {
      case Fragment::ltl_p:
      case Fragment::ltl_p_mod:
        return 0;
      case Fragment::ltl_p_y:
      case Fragment::ltl_p_y_mod:
        return 1;
      default:
        return 2;
    }
  };
  return temporal(inner) <= temporal(outer) && (!has_mod(inner) || has_mod(outer));
}

std::size_t temporal_depth(const Formula& formula) { return nesting(formula, true); }

std::size_t depth(const Formula& formula) { return nesting(formula, false); }

}  // namespace ropesim::ltl
