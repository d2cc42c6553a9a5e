// The schedule spec parser (parse_schedule; the grammar in schedule.hpp). It dispatches to the
// families, the presets and hf-config files (hf_config.hpp) and so sits above all of them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "attention/hf_config.hpp"
#include "attention/schedule.hpp"
#include "numeric/error.hpp"
#include "numeric/exact.hpp"
#include "numeric/lists.hpp"
#include "numeric/suggest.hpp"

namespace ropesim::attention {

namespace {

[[noreturn]] void bad_spec(std::string_view spec, const std::string& problem) {
  throw InvalidArgument("bad schedule '" + std::string(spec) + "': " + problem +
                        "; accepted: " + schedule_spellings());
}

/// The items of one list inside `spec` (numeric::split_items: no empty item, as '1,,2' or a
/// trailing ',' would be); throws InvalidArgument through bad_spec.
std::vector<std::string> items_of(std::string_view spec, std::string_view text, char separator) {
  std::vector<std::string> items = numeric::split_pieces(text, separator);
  if (const auto fault = numeric::list_fault(items, text, separator, numeric::Repeats::allowed)) {
    bad_spec(spec, fault->problem + ", items are separated by single '" +
                       std::string(1, separator) + "'");
  }
  return items;
}

std::size_t checked_dim(const mpq_class& d, const char* what) {
  // 65536 (32768 rotary blocks) is far beyond any model's head (≤ 256) and keeps a schedule's
  // exact angles within a few MB; 10^6 let one spec take about 1 GB (found by fuzz_schedule).
  if (d.get_den() != 1 || d < 2 || d > 65536 || d.get_num().get_ui() % 2 != 0) {
    throw InvalidArgument(std::string(what) + " must be an even integer in 2..65536, got " +
                          d.get_str());
  }
  return d.get_num().get_ui();
}

}  // namespace

std::string schedule_spellings() {
  return "conventional:base=B,dim=D | single:g=G (a decimal or a fraction P/Q) | "
         "periodic:m=M1,M2,... | "
         "periodic:A1/M1,A2/M2,... | partial:base=B,dim=D,factor=F | prope:base=B,dim=D,p=P | "
         "resonance:base=B,dim=D | "
         "resonance-yarn:base=B,dim=D,factor=S,original=L[,beta_fast=A,beta_slow=C] | "
         "axial2d:base=B,dim=D | mrope:base=B,dim=D,sections=T,H,W | "
         "hirope:base=B,dim=D,levels=L[,split=S1,...] | "
         "liere:axes=K,blocks=A|B|...,... (per block K angles: a/m turns or decimals) | "
         "hope:base=B,dim=D,train_len=T[,activated=K] | "
         "fope:base=B,dim=D,train_len=T[,sigma=S,seed=N] | "
         "hf-config:PATH | hf-config[seq_len=N]:PATH | a model preset (" +
         fmt::format("{}", fmt::join(model_preset_names(), ", ")) + ")";
}

namespace {

/// `hf-config:PATH` or `hf-config[seq_len=N]:PATH` (PATH: everything after the first ':').
Schedule parse_hf_config_spec(std::string_view spec) {
  const auto colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  const std::string path(spec.substr(colon + 1));
  if (path.empty()) bad_spec(spec, "hf-config needs a path after ':'");
  std::uint64_t seq_len = 0;
  if (head != "hf-config") {
    const std::string_view prefix = "hf-config[seq_len=";
    if (head.substr(0, prefix.size()) != prefix || head.back() != ']') {
      bad_spec(spec, "expected hf-config:PATH or hf-config[seq_len=N]:PATH");
    }
    const std::string n(head.substr(prefix.size(), head.size() - prefix.size() - 1));
    try {
      seq_len = numeric::parse_integer(n, "seq_len", 1, UINT64_MAX);
    } catch (const InvalidArgument& e) {
      bad_spec(spec, e.what());
    }
  }
  return hf_config_schedule(path, seq_len);
}

}  // namespace

Schedule parse_schedule(std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) {
    for (const auto& p : model_presets()) {
      if (p.name == spec) return preset_schedule(spec);
    }
    bad_spec(spec,
             "unknown schedule or preset name" + numeric::did_you_mean(spec, model_preset_names()));
  }
  const std::string kind(spec.substr(0, colon));
  const std::string_view rest = spec.substr(colon + 1);
  try {
    if (kind.rfind("hf-config", 0) == 0) return parse_hf_config_spec(spec);
    if (kind == "periodic") {
      std::vector<RationalTurn> turns;
      if (rest.substr(0, 2) == "m=") {
        for (const auto& item : items_of(spec, rest.substr(2), ',')) {
          try {  // decimal digits only: not 2e0, not 2.0
            turns.push_back(
                {1, mpz_class(std::to_string(numeric::parse_integer(item, "m", 1, UINT64_MAX)))});
          } catch (const InvalidArgument& e) {
            bad_spec(spec, e.what());
          }
        }
      } else {
        for (const auto& item : items_of(spec, rest, ',')) {
          auto slash = item.find('/');
          if (slash == std::string::npos) bad_spec(spec, "expected a/m, got '" + item + "'");
          mpq_class a = numeric::parse_decimal_exact(item.substr(0, slash), "a");
          mpq_class m = numeric::parse_decimal_exact(item.substr(slash + 1), "m");
          if (a.get_den() != 1 || m.get_den() != 1 || m < 1) {
            bad_spec(spec, "a/m needs integers with m ≥ 1, got '" + item + "'");
          }
          turns.push_back({a.get_num(), m.get_num()});
        }
      }
      return periodic_schedule(turns);
    }
    // key=value lists
    std::vector<std::pair<std::string, std::string>> kv;
    for (const auto& item : items_of(spec, rest, ',')) {
      auto eq = item.find('=');
      if (eq == std::string::npos) {
        // list values (mrope sections=T,H,W; hirope split=S1,S2,...; liere blocks=T1,T2,...)
        // continue after a comma
        if (!kv.empty() && (kv.back().first == "sections" || kv.back().first == "split" ||
                            kv.back().first == "blocks")) {
          kv.back().second += "," + item;
          continue;
        }
        bad_spec(spec, "expected key=value, got '" + item + "'");
      }
      const std::string key = item.substr(0, eq);
      for (const auto& [earlier, value] : kv) {
        if (earlier == key) bad_spec(spec, "key '" + key + "' is given twice; give each key once");
      }
      kv.emplace_back(key, item.substr(eq + 1));
    }
    auto take_text = [&](const char* key) -> std::string {
      for (auto it = kv.begin(); it != kv.end(); ++it) {
        if (it->first == key) {
          std::string v = it->second;
          kv.erase(it);
          return v;
        }
      }
      bad_spec(spec, std::string("missing ") + key + "=");
    };
    // An integer key: decimal digits only (numeric::parse_integer; not 1e3, not 8.0).
    auto integer_of = [&](const char* key, const std::string& text, std::uint64_t lo,
                          std::uint64_t hi) {
      try {
        return numeric::parse_integer(text, key, lo, hi);
      } catch (const InvalidArgument& e) {
        bad_spec(spec, e.what());
      }
    };
    auto sizes = [&](const char* key, const std::string& text) {
      std::vector<std::size_t> out;
      for (const auto& item : items_of(spec, text, ',')) {
        out.push_back(static_cast<std::size_t>(integer_of(key, item, 0, 32768)));
      }
      return out;
    };
    auto take = [&](const char* key) -> mpq_class {
      for (auto it = kv.begin(); it != kv.end(); ++it) {
        if (it->first == key) {
          // A value is an exact decimal or a fraction of two decimals (`g=1/4`): the spec a
          // schedule prints for a non-decimal rational must parse back (model spec round trip).
          const std::string& text = it->second;
          if (text.find('/') != std::string::npos &&
              numeric::parse_decimal_exact(text.substr(text.find('/') + 1), key) == 0) {
            bad_spec(spec, std::string(key) + "=" + text + " divides by zero");
          }
          const mpq_class v = numeric::parse_rational_exact(text, key);
          kv.erase(it);
          return v;
        }
      }
      bad_spec(spec, std::string("missing ") + key + "=");
    };
    auto take_integer = [&](const char* key, std::uint64_t lo, std::uint64_t hi) {
      return integer_of(key, take_text(key), lo, hi);
    };
    // 65536 (32768 rotary blocks) is far beyond any model's head; checked_dim: even.
    auto take_dim = [&]() { return checked_dim(mpq_class(take_integer("dim", 2, 65536)), "dim"); };
    auto take_optional = [&](const char* key) -> std::optional<mpq_class> {
      for (const auto& item : kv) {
        if (item.first == key) return take(key);
      }
      return std::nullopt;
    };
    auto done = [&]() {
      if (!kv.empty()) bad_spec(spec, "unexpected key '" + kv.front().first + "'");
    };
    Schedule s;
    if (kind == "conventional") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      done();
      s = conventional_schedule(base, dim);
    } else if (kind == "single") {
      mpq_class g = take("g");
      done();
      s = single_schedule(g);
    } else if (kind == "partial") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      mpq_class factor = take("factor");
      done();
      s = partial_schedule(base, dim, factor);
    } else if (kind == "prope") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      mpq_class p = take("p");
      done();
      s = prope_schedule(base, dim, p);
    } else if (kind == "resonance") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      done();
      s = resonance_schedule(base, dim);
    } else if (kind == "resonance-yarn") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      mpq_class factor = take("factor");
      mpq_class original = take("original");
      const auto beta_fast = take_optional("beta_fast");
      const auto beta_slow = take_optional("beta_slow");
      done();
      s = resonance_yarn_schedule(base, dim, factor, original, beta_fast, beta_slow);
    } else if (kind == "axial2d") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      done();
      s = axial2d_schedule(base, dim);
    } else if (kind == "mrope") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      const std::vector<std::size_t> sections = sizes("sections", take_text("sections"));
      done();
      s = mrope_schedule(base, dim, sections);
    } else if (kind == "hirope") {
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      const std::uint64_t levels = take_integer("levels", 2, 8);
      std::vector<std::size_t> split_sizes;
      if (std::any_of(kv.begin(), kv.end(), [](const auto& p) { return p.first == "split"; })) {
        split_sizes = sizes("split", take_text("split"));
      }
      done();
      s = hirope_schedule(base, dim, levels, split_sizes);
    } else if (kind == "liere") {
      const std::uint64_t axes = take_integer("axes", 1, 8);
      const std::string text = take_text("blocks");
      done();
      std::vector<LieReBlock> blocks;
      for (const auto& item : items_of(spec, text, ',')) {
        LieReBlock b;
        for (const auto& angle : items_of(spec, item, '|')) {
          if (const auto slash = angle.find('/'); slash != std::string::npos) {
            const mpq_class a = numeric::parse_decimal_exact(angle.substr(0, slash), "a");
            const mpq_class m = numeric::parse_decimal_exact(angle.substr(slash + 1), "m");
            if (a.get_den() != 1 || m.get_den() != 1 || m < 1) {
              bad_spec(spec, "a turn a/m needs integers with m ≥ 1, got '" + angle + "'");
            }
            b.angles.emplace_back(RationalTurn{a.get_num(), m.get_num()});
          } else {
            b.angles.emplace_back(numeric::parse_decimal_exact(angle, "angle"));
          }
        }
        blocks.push_back(std::move(b));
      }
      s = liere_schedule(axes, blocks);
    } else if (kind == "hope" || kind == "fope") {
      // base, dim and train_len required; the optional keys of each kind after them
      const char* accepted =
          kind == "hope" ? "base, dim, train_len, activated" : "base, dim, train_len, sigma, seed";
      auto has = [&](const char* key) {
        return std::any_of(kv.begin(), kv.end(), [&](const auto& p) { return p.first == key; });
      };
      for (const auto& [key, value] : kv) {
        (void)value;
        const std::string keys = std::string(", ") + accepted + ",";
        if (keys.find(", " + key + ",") == std::string::npos) {
          bad_spec(spec, "unexpected key '" + key + "' (" + kind + " accepts " + accepted + ")");
        }
      }
      mpq_class base = take("base");
      std::size_t dim = take_dim();
      const std::uint64_t train_len = take_integer("train_len", 1, UINT64_MAX);
      if (kind == "hope") {
        const std::uint64_t activated =
            has("activated") ? take_integer("activated", 0, UINT64_MAX) : 0;
        done();
        s = hope_schedule(base, dim, train_len, activated);
      } else {
        const mpq_class sigma = has("sigma") ? take("sigma") : mpq_class(3, 10);
        const std::uint64_t seed = has("seed") ? take_integer("seed", 0, UINT64_MAX) : 0;
        done();
        s = fope_schedule(base, dim, train_len, sigma, seed);
      }
    } else {
      bad_spec(spec, "unknown kind '" + kind + "'" +
                         numeric::did_you_mean(
                             kind, std::vector<std::string>{
                                       "conventional", "single", "partial", "prope", "periodic",
                                       "resonance", "resonance-yarn", "axial2d", "mrope", "hirope",
                                       "liere", "hope", "fope", "hf-config"}));
    }
    return s;
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    if (what.rfind("bad schedule", 0) == 0) throw;
    if (what.rfind("hf-config", 0) == 0) throw;  // already names the file
    bad_spec(spec, what);
  }
}

}  // namespace ropesim::attention
