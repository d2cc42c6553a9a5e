#include "properties/generators.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <numeric>

#include "logic/formula.hpp"

namespace ropesim::properties {

rc::Gen<numeric::Format> format_gen(int min_p, int max_p,
                                    const std::optional<numeric::Format>& fixed) {
  if (fixed) return rc::gen::just(*fixed);
  // the named formats (numeric::named_formats) with min_p <= p <= max_p, fp32 first
  std::vector<numeric::Format> presets;
  for (const numeric::NamedFormat& named : numeric::named_formats()) {
    const numeric::Format f = named.make();
    if (f.precision < min_p || f.precision > max_p) continue;
    if (named.name == "fp32") {
      presets.insert(presets.begin(), f);
    } else {
      presets.push_back(f);
    }
  }
  auto random = rc::gen::apply(
      [](int p, int exponent_bits) { return numeric::Format::ieee(p, exponent_bits); },
      rc::gen::inRange(min_p, max_p + 1), rc::gen::inRange(5, 12));
  if (presets.empty()) return random;
  // Presets first (they shrink to fp32), random formats about a third of the time.
  return rc::gen::weightedOneOf<numeric::Format>(
      {{2, rc::gen::elementOf(presets)}, {1, std::move(random)}});
}

rc::Gen<std::string> periodic_schedule_gen(int max_blocks, int max_modulus) {
  const auto turn = rc::gen::mapcat(rc::gen::inRange(1, max_modulus + 1), [](int m) {
    return rc::gen::map(rc::gen::inRange(0, m), [m](int a) {
      // The smallest a' ≥ a coprime to m (a = 0 only for m = 1: θ = 0).
      if (m == 1) return std::string("0/1");
      int b = a == 0 ? 1 : a;
      while (std::gcd(b, m) != 1) b = b % (m - 1) + 1;
      return fmt::format("{}/{}", b, m);
    });
  });
  return rc::gen::map(rc::gen::mapcat(rc::gen::inRange(1, max_blocks + 1),
                                      [turn](int n) {
                                        return rc::gen::container<std::vector<std::string>>(
                                            static_cast<std::size_t>(n), turn);
                                      }),
                      [](const std::vector<std::string>& turns) {
                        return fmt::format("periodic:{}", fmt::join(turns, ","));
                      });
}

rc::Gen<std::string> irrational_schedule_gen() {
  return rc::gen::oneOf(
      rc::gen::just(std::string("single:g=1")),
      rc::gen::map(rc::gen::pair(rc::gen::inRange(1, 50), rc::gen::inRange(1, 50)),
                   [](const std::pair<int, int>& nd) {
                     return fmt::format("single:g={}/{}", nd.first, nd.second);
                   }),
      rc::gen::map(rc::gen::pair(rc::gen::element(10000, 500000, 0), rc::gen::element(2, 4, 8)),
                   [](const std::pair<int, int>& bd) {
                     const int base = bd.first == 0 ? 257 : bd.first;
                     return fmt::format("conventional:base={},dim={}", base, bd.second);
                   }));
}

rc::Gen<std::string> word_gen(const std::string& alphabet, std::uint64_t min_length,
                              std::uint64_t max_length) {
  const auto letter = rc::gen::elementOf(alphabet);
  return rc::gen::mapcat(
      rc::gen::inRange<std::uint64_t>(min_length, max_length + 1), [letter](std::uint64_t n) {
        return rc::gen::container<std::string>(static_cast<std::size_t>(n), letter);
      });
}

rc::Gen<std::string> dfa_gen(int max_states, int max_letters) {
  return rc::gen::exec([=] {
    const auto n = *rc::gen::inRange<std::size_t>(2, static_cast<std::size_t>(max_states) + 1);
    const auto letters =
        *rc::gen::inRange<std::size_t>(2, static_cast<std::size_t>(max_letters) + 1);
    const bool ordered = *rc::gen::element(true, false);
    std::vector<std::size_t> name(n);  // the state at rank r of the hidden order is name[r]
    for (std::size_t r = 0; r < n; ++r) name[r] = r;
    for (std::size_t i = n; i > 1; --i)
      std::swap(name[i - 1], name[*rc::gen::inRange<std::size_t>(0, i)]);
    std::vector<std::vector<std::size_t>> transitions(n, std::vector<std::size_t>(letters));
    for (std::size_t r = 0; r < n; ++r) {
      for (std::size_t a = 0; a < letters; ++a) {
        const bool stay = *rc::gen::element(true, false);
        transitions[name[r]][a] =
            stay ? name[r] : name[*rc::gen::inRange<std::size_t>(ordered ? r : 0, n)];
      }
    }
    std::vector<std::size_t> accepting;
    for (std::size_t q = 0; q < n; ++q)
      if (*rc::gen::element(false, true)) accepting.push_back(q);
    std::vector<std::string> alphabet;
    for (std::size_t a = 0; a < letters; ++a) alphabet.emplace_back(1, static_cast<char>('a' + a));
    const nlohmann::json dfa = {{"alphabet", alphabet},
                                {"states", n},
                                {"initial", name[*rc::gen::inRange<std::size_t>(0, n)]},
                                {"accepting", accepting},
                                {"transitions", transitions}};
    return dfa.dump();
  });
}

rc::Gen<std::string> formula_gen(const std::string& alphabet, FormulaFragment fragment,
                                 int max_nodes, int max_modulus) {
  return rc::gen::exec([=] {
    ltl::Formula f;
    std::vector<ltl::NodeId> ids;
    // At least three nodes; after two leaves, mostly operators (P about a third of them), so
    // the root — the last node — is rarely a bare atom.
    const int count = *rc::gen::inRange(std::min(3, max_nodes), max_nodes + 1);
    const auto pick = [&] { return ids[*rc::gen::inRange<std::size_t>(0, ids.size())]; };
    const auto atom = [&] {
      return f.symbol(std::string(1, alphabet[*rc::gen::inRange<std::size_t>(0, alphabet.size())]));
    };
    const int leaves = fragment == FormulaFragment::ltl_p_mod ? 3 : 2;
    for (int i = 0; i < count; ++i) {
      const int op = ids.size() < 2 ? *rc::gen::inRange(0, leaves) : *rc::gen::inRange(0, 12);
      ltl::NodeId id = 0;
      switch (op) {
        case 0:
          id = atom();
          break;
        case 1:
          id = f.top();
          break;
        case 2:
          if (fragment == FormulaFragment::ltl_p_mod) {
            const auto m =
                *rc::gen::inRange<std::uint64_t>(1, static_cast<std::uint64_t>(max_modulus) + 1);
            id = f.modulo(m, *rc::gen::inRange<std::uint64_t>(0, m));
          } else {
            id = atom();
          }
          break;
        case 3:
        case 4:
          id = f.negation(pick());
          break;
        case 5:
        case 6:
          id = f.conjunction(pick(), pick());
          break;
        case 7:
          id = f.disjunction(pick(), pick());
          break;
        case 11:
          if (fragment == FormulaFragment::ltl_p_y) {
            id = f.yesterday(pick(), *rc::gen::inRange<std::uint64_t>(1, 4));
          } else {
            id = f.past(pick());
          }
          break;
        default:
          id = f.past(pick());
          break;
      }
      ids.push_back(id);
    }
    // LTL[P,Y]: every formula has a Y^k at its root or below, so every trial runs a Y^k head.
    if (fragment == FormulaFragment::ltl_p_y) {
      bool has_y = false;
      for (const auto& node : f.nodes()) has_y = has_y || node.op == ltl::Operator::yesterday;
      if (!has_y) ids.push_back(f.yesterday(ids.back(), *rc::gen::inRange<std::uint64_t>(1, 4)));
    }
    f.set_root(ids.back());
    return ltl::to_string(f);
  });
}

std::uint64_t schedule_period(const attention::Schedule& schedule) {
  std::uint64_t period = 1;
  for (const auto& block : schedule.blocks) {
    if (!block.turn) continue;
    period = std::lcm(period, block.turn->m.get_ui());
  }
  return period;
}

}  // namespace ropesim::properties
