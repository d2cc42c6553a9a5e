// The schedule spec parser (parse_schedule; the grammar in schedule.hpp). It dispatches to the
// families, the presets and hf-config files (hf_config.hpp) and so sits above all of them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <sstream>

#include "attention/schedules/hf_config.hpp"
#include "attention/schedules/schedule.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "core/suggest.hpp"
#include "numeric/exact.hpp"

namespace ropesim::attention {

namespace {

[[noreturn]] void bad_spec(std::string_view spec, const std::string& problem) {
  throw InvalidArgument("bad schedule '" + std::string(spec) + "': " + problem +
                        "; accepted: " + schedule_spellings());
}

/// The items of one list inside `spec` (ropesim::split_items: no empty item, as '1,,2' or a
/// trailing ',' would be); throws InvalidArgument through bad_spec.
std::vector<std::string> items_of(std::string_view spec, std::string_view text, char separator) {
  std::vector<std::string> items = ropesim::split_pieces(text, separator);
  if (const auto fault = ropesim::list_fault(items, text, separator, ropesim::Repeats::allowed)) {
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

namespace {

/// The `key=value,...` text of a keyed family (after `kind:`), taken key by key by the family's
/// builder; every error goes through bad_spec.
class SpecKeys {
 public:
  SpecKeys(std::string_view spec, std::string_view rest) : spec_(spec) {
    for (const auto& item : items_of(spec, rest, ',')) {
      auto eq = item.find('=');
      if (eq == std::string::npos) {
        // list values (mrope sections=T,H,W; hirope split=S1,S2,...; liere blocks=T1,T2,...)
        // continue after a comma
        if (!kv_.empty() && (kv_.back().first == "sections" || kv_.back().first == "split" ||
                             kv_.back().first == "blocks")) {
          kv_.back().second += "," + item;
          continue;
        }
        bad_spec(spec, "expected key=value, got '" + item + "'");
      }
      const std::string key = item.substr(0, eq);
      for (const auto& [earlier, value] : kv_) {
        if (earlier == key) bad_spec(spec, "key '" + key + "' is given twice; give each key once");
      }
      kv_.emplace_back(key, item.substr(eq + 1));
    }
  }

  std::string_view spec() const { return spec_; }
  const std::vector<std::pair<std::string, std::string>>& keys() const { return kv_; }
  bool has(const char* key) const {
    return std::any_of(kv_.begin(), kv_.end(), [&](const auto& p) { return p.first == key; });
  }

  std::string take_text(const char* key) {
    for (auto it = kv_.begin(); it != kv_.end(); ++it) {
      if (it->first == key) {
        std::string v = it->second;
        kv_.erase(it);
        return v;
      }
    }
    bad_spec(spec_, std::string("missing ") + key + "=");
  }

  /// An exact decimal or a fraction of two decimals (`g=1/4`): the spec a schedule prints for a
  /// non-decimal rational must parse back (model spec round trip).
  mpq_class take(const char* key) {
    if (!has(key)) bad_spec(spec_, std::string("missing ") + key + "=");
    const std::string text = take_text(key);
    if (text.find('/') != std::string::npos &&
        numeric::parse_decimal_exact(text.substr(text.find('/') + 1), key) == 0) {
      bad_spec(spec_, std::string(key) + "=" + text + " divides by zero");
    }
    return numeric::parse_rational_exact(text, key);
  }

  std::optional<mpq_class> take_optional(const char* key) {
    if (!has(key)) return std::nullopt;
    return take(key);
  }

  /// An integer key: decimal digits only (ropesim::parse_integer; not 1e3, not 8.0).
  std::uint64_t integer_of(const char* key, const std::string& text, std::uint64_t lo,
                           std::uint64_t hi) const {
    try {
      return ropesim::parse_integer(text, key, lo, hi);
    } catch (const InvalidArgument& e) {
      bad_spec(spec_, e.what());
    }
  }

  std::uint64_t take_integer(const char* key, std::uint64_t lo, std::uint64_t hi) {
    return integer_of(key, take_text(key), lo, hi);
  }

  /// 65536 (32768 rotary blocks) is far beyond any model's head; checked_dim: even.
  std::size_t take_dim() { return checked_dim(mpq_class(take_integer("dim", 2, 65536)), "dim"); }

  /// The comma list of sizes under `key` (mrope sections, hirope split).
  std::vector<std::size_t> take_sizes(const char* key) {
    std::vector<std::size_t> out;
    for (const auto& item : items_of(spec_, take_text(key), ',')) {
      out.push_back(static_cast<std::size_t>(integer_of(key, item, 0, 32768)));
    }
    return out;
  }

  /// Every key taken: anything left is refused.
  void done() const {
    if (!kv_.empty()) bad_spec(spec_, "unexpected key '" + kv_.front().first + "'");
  }

 private:
  std::string_view spec_;
  std::vector<std::pair<std::string, std::string>> kv_;
};

/// `periodic:m=M1,M2,...` or `periodic:A1/M1,A2/M2,...`.
Schedule parse_periodic(std::string_view spec, std::string_view rest) {
  std::vector<RationalTurn> turns;
  if (rest.substr(0, 2) == "m=") {
    for (const auto& item : items_of(spec, rest.substr(2), ',')) {
      try {  // decimal digits only: not 2e0, not 2.0
        turns.push_back(
            {1, mpz_class(std::to_string(ropesim::parse_integer(item, "m", 1, UINT64_MAX)))});
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

/// `hf-config:PATH` or `hf-config[seq_len=N]:PATH` (PATH: everything after the first ':').
Schedule parse_hf_config_spec(std::string_view spec, std::string_view /*rest*/) {
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
      seq_len = ropesim::parse_integer(n, "seq_len", 1, UINT64_MAX);
    } catch (const InvalidArgument& e) {
      bad_spec(spec, e.what());
    }
  }
  return hf_config_schedule(path, seq_len);
}

/// `liere:axes=K,blocks=A|B|...,...`: per block K angles, a/m turns or decimals.
Schedule build_liere(SpecKeys& k) {
  const std::uint64_t axes = k.take_integer("axes", 1, 8);
  const std::string text = k.take_text("blocks");
  k.done();
  std::vector<LieReBlock> blocks;
  for (const auto& item : items_of(k.spec(), text, ',')) {
    LieReBlock b;
    for (const auto& angle : items_of(k.spec(), item, '|')) {
      if (const auto slash = angle.find('/'); slash != std::string::npos) {
        const mpq_class a = numeric::parse_decimal_exact(angle.substr(0, slash), "a");
        const mpq_class m = numeric::parse_decimal_exact(angle.substr(slash + 1), "m");
        if (a.get_den() != 1 || m.get_den() != 1 || m < 1) {
          bad_spec(k.spec(), "a turn a/m needs integers with m ≥ 1, got '" + angle + "'");
        }
        b.angles.emplace_back(RationalTurn{a.get_num(), m.get_num()});
      } else {
        b.angles.emplace_back(numeric::parse_decimal_exact(angle, "angle"));
      }
    }
    blocks.push_back(std::move(b));
  }
  return liere_schedule(axes, blocks);
}

/// The builder of a family spelled `kind:base=B,dim=D`.
template <Schedule (*make)(const mpq_class&, std::size_t)>
Schedule base_dim(SpecKeys& k) {
  const mpq_class base = k.take("base");
  const std::size_t dim = k.take_dim();
  k.done();
  return make(base, dim);
}

/// The builder of a family spelled `kind:base=B,dim=D,<key>=Q` (Q rational).
template <Schedule (*make)(const mpq_class&, std::size_t, const mpq_class&)>
Schedule base_dim_and(SpecKeys& k, const char* key) {
  const mpq_class base = k.take("base");
  const std::size_t dim = k.take_dim();
  const mpq_class q = k.take(key);
  k.done();
  return make(base, dim, q);
}

/// One schedule family of the spec grammar (schedule.hpp): `kind:...`. Adding a family is one
/// row of `families` below (plus its test and docs).
struct ScheduleFamily {
  std::string_view kind = {};  ///< the text before ':'
  /// Its spellings, as schedule_spellings() lists them.
  std::string_view spelling = {};
  /// Keyed families (`kind:key=value,...`): the accepted keys, in the order spelled; a key
  /// outside them is refused before any is read, naming them. Empty for the families that read
  /// their text themselves (`text`).
  std::string_view parameters = {};
  Schedule (*keyed)(SpecKeys&) = nullptr;  ///< the builder of a keyed family
  Schedule (*text)(std::string_view, std::string_view) = nullptr;  ///< (spec, text after ':')
  bool prefix = false;  ///< matches every kind that starts with `kind` (hf-config[seq_len=N])
};

constexpr ScheduleFamily families[] = {
    {.kind = "conventional",
     .spelling = "conventional:base=B,dim=D",
     .parameters = "base, dim",
     .keyed = base_dim<conventional_schedule>},
    {.kind = "single",
     .spelling = "single:g=G (a decimal or a fraction P/Q)",
     .parameters = "g",
     .keyed =
         [](SpecKeys& k) {
           const mpq_class g = k.take("g");
           k.done();
           return single_schedule(g);
         }},
    {.kind = "periodic",
     .spelling = "periodic:m=M1,M2,... | periodic:A1/M1,A2/M2,...",
     .text = parse_periodic},
    {.kind = "partial",
     .spelling = "partial:base=B,dim=D,factor=F",
     .parameters = "base, dim, factor",
     .keyed = [](SpecKeys& k) { return base_dim_and<partial_schedule>(k, "factor"); }},
    {.kind = "prope",
     .spelling = "prope:base=B,dim=D,p=P",
     .parameters = "base, dim, p",
     .keyed = [](SpecKeys& k) { return base_dim_and<prope_schedule>(k, "p"); }},
    {.kind = "resonance",
     .spelling = "resonance:base=B,dim=D",
     .parameters = "base, dim",
     .keyed = base_dim<resonance_schedule>},
    {.kind = "resonance-yarn",
     .spelling = "resonance-yarn:base=B,dim=D,factor=S,original=L[,beta_fast=A,beta_slow=C]",
     .parameters = "base, dim, factor, original, beta_fast, beta_slow",
     .keyed =
         [](SpecKeys& k) {
           const mpq_class base = k.take("base");
           const std::size_t dim = k.take_dim();
           const mpq_class factor = k.take("factor");
           const mpq_class original = k.take("original");
           const auto beta_fast = k.take_optional("beta_fast");
           const auto beta_slow = k.take_optional("beta_slow");
           k.done();
           return resonance_yarn_schedule(base, dim, factor, original, beta_fast, beta_slow);
         }},
    {.kind = "axial2d",
     .spelling = "axial2d:base=B,dim=D",
     .parameters = "base, dim",
     .keyed = base_dim<axial2d_schedule>},
    {.kind = "mrope",
     .spelling = "mrope:base=B,dim=D,sections=T,H,W",
     .parameters = "base, dim, sections",
     .keyed =
         [](SpecKeys& k) {
           const mpq_class base = k.take("base");
           const std::size_t dim = k.take_dim();
           const std::vector<std::size_t> sections = k.take_sizes("sections");
           k.done();
           return mrope_schedule(base, dim, sections);
         }},
    {.kind = "hirope",
     .spelling = "hirope:base=B,dim=D,levels=L[,split=S1,...]",
     .parameters = "base, dim, levels, split",
     .keyed =
         [](SpecKeys& k) {
           const mpq_class base = k.take("base");
           const std::size_t dim = k.take_dim();
           const std::uint64_t levels = k.take_integer("levels", 2, 8);
           const std::vector<std::size_t> split =
               k.has("split") ? k.take_sizes("split") : std::vector<std::size_t>{};
           k.done();
           return hirope_schedule(base, dim, levels, split);
         }},
    {.kind = "liere",
     .spelling = "liere:axes=K,blocks=A|B|...,... (per block K angles: a/m turns or decimals)",
     .parameters = "axes, blocks",
     .keyed = build_liere},
    {.kind = "hope",
     .spelling = "hope:base=B,dim=D,train_len=T[,activated=K]",
     .parameters = "base, dim, train_len, activated",
     .keyed =
         [](SpecKeys& k) {
           const mpq_class base = k.take("base");
           const std::size_t dim = k.take_dim();
           const std::uint64_t train_len = k.take_integer("train_len", 1, UINT64_MAX);
           const std::uint64_t activated =
               k.has("activated") ? k.take_integer("activated", 0, UINT64_MAX) : 0;
           k.done();
           return hope_schedule(base, dim, train_len, activated);
         }},
    {.kind = "fope",
     .spelling = "fope:base=B,dim=D,train_len=T[,sigma=S,seed=N]",
     .parameters = "base, dim, train_len, sigma, seed",
     .keyed =
         [](SpecKeys& k) {
           const mpq_class base = k.take("base");
           const std::size_t dim = k.take_dim();
           const std::uint64_t train_len = k.take_integer("train_len", 1, UINT64_MAX);
           const mpq_class sigma = k.has("sigma") ? k.take("sigma") : mpq_class(3, 10);
           const std::uint64_t seed = k.has("seed") ? k.take_integer("seed", 0, UINT64_MAX) : 0;
           k.done();
           return fope_schedule(base, dim, train_len, sigma, seed);
         }},
    {.kind = "hf-config",
     .spelling = "hf-config:PATH | hf-config[seq_len=N]:PATH",
     .text = parse_hf_config_spec,
     .prefix = true},
};

}  // namespace

std::string schedule_spellings() {
  std::string out;
  for (const ScheduleFamily& family : families) out += std::string(family.spelling) + " | ";
  return out + "a model preset (" + fmt::format("{}", fmt::join(model_preset_names(), ", ")) + ")";
}

Schedule parse_schedule(std::string_view spec) {
  const auto colon = spec.find(':');
  if (colon == std::string_view::npos) {
    for (const auto& p : model_presets()) {
      if (p.name == spec) return preset_schedule(spec);
    }
    bad_spec(spec,
             "unknown schedule or preset name" + ropesim::did_you_mean(spec, model_preset_names()));
  }
  const std::string kind(spec.substr(0, colon));
  const std::string_view rest = spec.substr(colon + 1);
  try {
    for (const ScheduleFamily& family : families) {
      if (kind != family.kind && !(family.prefix && kind.rfind(family.kind, 0) == 0)) continue;
      if (family.text != nullptr) return family.text(spec, rest);
      SpecKeys keys(spec, rest);
      const std::string accepted = ", " + std::string(family.parameters) + ",";
      for (const auto& [key, value] : keys.keys()) {
        if (accepted.find(", " + key + ",") == std::string::npos) {
          bad_spec(spec, "unexpected key '" + key + "' (" + kind + " accepts " +
                             std::string(family.parameters) + ")");
        }
      }
      return family.keyed(keys);
    }
    std::vector<std::string> kinds;
    for (const ScheduleFamily& family : families) kinds.emplace_back(family.kind);
    bad_spec(spec, "unknown kind '" + kind + "'" + ropesim::did_you_mean(kind, kinds));
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    if (what.rfind("bad schedule", 0) == 0) throw;
    if (what.rfind("hf-config", 0) == 0) throw;  // already names the file
    bad_spec(spec, what);
  }
}

}  // namespace ropesim::attention
