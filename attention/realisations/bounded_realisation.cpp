#include "attention/realisations/bounded_realisation.hpp"

#include <bit>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "attention/detail/evaluator.hpp"
#include "attention/detail/format_ops.hpp"
#include "core/error.hpp"
#include "core/lists.hpp"
#include "numeric/mpfr_util.hpp"

namespace ropesim::attention {

namespace {

constexpr std::uint32_t kMaxUlps = 1u << 20;

[[noreturn]] void bad_model(std::string_view text, const std::string& problem) {
  throw InvalidArgument("bad bounded trig '" + std::string(text) + "': " + problem +
                        "; accepted: " + TrigErrorModel::spellings());
}

bool all_digits(std::string_view t) {
  return !t.empty() && t.find_first_not_of("0123456789") == std::string_view::npos;
}

/// The named vendor models (TrigErrorModel file comment).
std::optional<TrigErrorModel> named_model(std::string_view text) {
  TrigErrorModel m;
  m.name = std::string(text);
  if (text == "cuda" || text == "metal") {
    m.kind = TrigErrorModel::Kind::ulps;
    m.ulps = text == "cuda" ? 2 : 4;
    m.source = text == "cuda" ? "CUDA C++ Programming Guide, Mathematical Functions, Table 17: "
                                "cosf, sinf 2 ulp (full range; from tests, not guaranteed)"
                              : "Metal Shading Language Specification 8.4, Table 8.1: precise "
                                "cos, sin <= 4 ulp";
    return m;
  }
  if (text == "cuda-fast" || text == "metal-fast") {
    m.kind = TrigErrorModel::Kind::absolute;
    m.domain_limit = M_PI;  // the double below pi: no binary32 value lies between it and pi
    if (text == "cuda-fast") {
      m.cos_exponent = mpq_class(2119, 100);
      m.sin_exponent = mpq_class(2141, 100);
      m.source =
          "CUDA C++ Programming Guide, Mathematical Functions, Table 21: __cosf max absolute "
          "error 2^-21.19, __sinf 2^-21.41 for x in [-pi, pi], larger otherwise";
    } else {
      m.cos_exponent = m.sin_exponent = 13;
      m.source =
          "Metal Shading Language Specification 8.4, Table 8.2 (fast math): cos, sin max "
          "absolute error <= 2^-13 for x in [-pi, pi], larger otherwise";
    }
    return m;
  }
  return std::nullopt;
}

/// Binary32 values as integers in their order (±0 → 0), and back.
std::int64_t ordered(float f) {
  const auto u = std::bit_cast<std::uint32_t>(f);
  return (u & 0x80000000u) != 0 ? -static_cast<std::int64_t>(u & 0x7fffffffu)
                                : static_cast<std::int64_t>(u);
}
float from_ordered(std::int64_t k) {
  constexpr std::int64_t max_finite = 0x7f7fffff;
  k = std::max(-max_finite, std::min(max_finite, k));
  return k >= 0 ? std::bit_cast<float>(static_cast<std::uint32_t>(k))
                : std::bit_cast<float>(0x80000000u | static_cast<std::uint32_t>(-k));
}

/// Splits a cos_sin value "fp32[>STORE][@MODE]:SUFFIX" at its first ':'.
std::pair<std::string, std::string> split_suffix(const std::string& value) {
  const auto colon = value.find(':');
  if (colon == std::string::npos) return {value, ""};
  return {value.substr(0, colon), value.substr(colon + 1)};
}

bool is_bounded_suffix(std::string_view suffix) {
  return suffix.substr(0, 3) == "ulp" || named_model(suffix).has_value();
}

}  // namespace

TrigErrorModel TrigErrorModel::parse(std::string_view text) {
  if (auto m = named_model(text)) return *m;
  if (text.substr(0, 3) != "ulp") bad_model(text, "unknown model");
  std::string_view rest = text.substr(3);
  // the separators: '-' (documented), ':', '<=', '≤' (also accepted)
  for (std::string_view sep : {"-", ":", "<=", "\u2264"}) {
    if (rest.substr(0, sep.size()) == sep) {
      rest = rest.substr(sep.size());
      break;
    }
  }
  std::string_view count = rest, domain;
  if (const auto at = rest.find('@'); at != std::string_view::npos) {
    count = rest.substr(0, at);
    domain = rest.substr(at + 1);
  }
  if (!all_digits(count) || count.size() > 7)
    bad_model(text, "U must be an integer 0.." + std::to_string(kMaxUlps));
  const unsigned long u = std::stoul(std::string(count));
  if (u > kMaxUlps) bad_model(text, "U must be an integer 0.." + std::to_string(kMaxUlps));
  TrigErrorModel m;
  m.kind = Kind::ulps;
  m.ulps = static_cast<std::uint32_t>(u);
  m.name = "ulp-" + std::to_string(u);
  if (text.find('@') != std::string_view::npos) {
    const std::string d(domain);
    char* end = nullptr;
    const double r = d.empty() ? 0 : std::strtod(d.c_str(), &end);
    if (d.empty() || end != d.c_str() + d.size() || !(r > 0) || !std::isfinite(r))
      bad_model(text, "the domain R of @R must be a positive number, e.g. @100000");
    m.domain_limit = r;
    m.name += "@" + d;
  }
  return m;
}

std::string TrigErrorModel::spellings() {
  return "ulp-U | ulp:U | ulp<=U (U = 0..1048576 binary32 steps from the correctly rounded "
         "value), each optionally @R (documented only for |x| <= R) | cuda (= ulp-2) | cuda-fast "
         "(__cosf/__sinf) | metal (= ulp-4) | metal-fast (fast::cos/fast::sin)";
}

std::string BoundedRealisation::name() const {
  std::string n = base.name();
  const std::string cs = "cos_sin=" + base.steps.cos_sin.spelling();
  if (const auto at = n.find(cs); at != std::string::npos) {
    n.insert(at + cs.size(), ":" + model.name);
  } else {
    n += ";cos_sin=" + base.steps.cos_sin.spelling() + ":" + model.name;
  }
  return n;
}

bool is_bounded_realisation_spec(std::string_view spec) {
  if (spec.substr(0, 9) != "pipeline:") return false;
  for (const auto& item : ropesim::split_pieces(std::string(spec.substr(9)), ';')) {
    if (item.rfind("cos_sin=", 0) != 0) continue;
    if (is_bounded_suffix(split_suffix(item.substr(8)).second)) return true;
  }
  return false;
}

BoundedRealisation parse_bounded_realisation(std::string_view spec,
                                             const numeric::FormatBinding& binding) {
  auto bad = [&](const std::string& problem) {
    throw InvalidArgument("bad realisation '" + std::string(spec) + "': " + problem);
  };
  if (!is_bounded_realisation_spec(spec))
    bad("not a bounded pipeline (expected pipeline:...;cos_sin=fp32:MODEL with MODEL one of " +
        TrigErrorModel::spellings() + ")");
  BoundedRealisation out;
  out.spec = std::string(spec);
  std::string rebuilt = "pipeline:";
  bool first = true;
  for (const auto& item : ropesim::split_pieces(std::string(spec.substr(9)), ';')) {
    std::string piece = item;
    if (item.rfind("cos_sin=", 0) == 0) {
      const auto [formats, suffix] = split_suffix(item.substr(8));
      if (is_bounded_suffix(suffix)) {
        out.model = TrigErrorModel::parse(suffix);
        piece = "cos_sin=" + formats;
      }
    }
    rebuilt += (first ? "" : ";") + piece;
    first = false;
  }
  out.base = parse_realisation(rebuilt, binding);
  const StepFormat& cs = out.base.steps.cos_sin;
  if (cs.compute != Format::fp32())
    bad("bounded trig models binary32 cos and sin: cos_sin must compute in fp32, got " +
        cs.compute.name + " (a storage cast, e.g. fp32>bf16, is accepted)");
  if (cs.rounding_or(out.base.rounding) != Rounding::nearest_even)
    bad("bounded trig is relative to the nearest-even binary32 result: drop @MODE on cos_sin and "
        "the directed --rounding");
  return out;
}

void check_bounded_applicable(const Schedule& s, const BoundedRealisation& r) {
  check_applicable(s, r.base);
  if (s.is_multi_axis())
    throw InvalidArgument("bounded trig (" + r.model.name + ") covers one-axis schedules; '" +
                          s.spec + "' has position axes; accepted: a schedule without them");
}

std::pair<float, float> allowed_results(const TrigErrorModel& model, float x, bool is_cos,
                                        bool* documented) {
  if (documented != nullptr) *documented = true;
  if (!(std::fabs(static_cast<double>(x)) <= model.domain_limit)) {
    if (documented != nullptr) *documented = false;
    return {-1.0f, 1.0f};
  }
  if (model.kind == TrigErrorModel::Kind::ulps) {
    // RN(cos x) at 24 bits (no binary32 cos or sin of a finite argument is subnormal but 0)
    numeric::Mpfr arg(24), r(24);
    mpfr_set_flt(arg, x, MPFR_RNDN);
    if (is_cos)
      mpfr_cos(r, arg, MPFR_RNDN);
    else
      mpfr_sin(r, arg, MPFR_RNDN);
    const std::int64_t k = ordered(mpfr_get_flt(r, MPFR_RNDN));
    return {from_ordered(k - model.ulps), from_ordered(k + model.ulps)};
  }
  // absolute: [RU(cos x − E), RD(cos x + E)] with cos x and E enclosed at 200 bits outward
  const mpq_class& e = is_cos ? model.cos_exponent : model.sin_exponent;
  numeric::Mpfr arg(24), lo(200), hi(200), bound(200), minus_e(200);
  mpfr_set_flt(arg, x, MPFR_RNDN);
  const mpq_class neg = -e;
  mpfr_set_q(minus_e, neg.get_mpq_t(), MPFR_RNDU);
  mpfr_exp2(bound, minus_e, MPFR_RNDU);  // ≥ 2^-e
  if (is_cos) {
    mpfr_cos(lo, arg, MPFR_RNDD);
    mpfr_cos(hi, arg, MPFR_RNDU);
  } else {
    mpfr_sin(lo, arg, MPFR_RNDD);
    mpfr_sin(hi, arg, MPFR_RNDU);
  }
  mpfr_sub(lo, lo, bound, MPFR_RNDD);
  mpfr_add(hi, hi, bound, MPFR_RNDU);
  return {mpfr_get_flt(lo, MPFR_RNDU), mpfr_get_flt(hi, MPFR_RNDD)};
}

namespace {

/// The pipeline's steps after cos_sin, as the evaluator applies them (detail/evaluator.cpp
/// PipelineGroup::compute): the cos_sin storage cast, the attention factor (convert, multiply,
/// store), the table cast. Each is a monotone non-decreasing map of the value.
class LaterSteps {
 public:
  LaterSteps(const Schedule& s, const Realisation& r) {
    const numeric::Engine& engine = r.arithmetic_engine();
    const PipelineSteps& st = r.steps;
    if (st.cos_sin.store)
      cs_store_ = std::make_unique<detail::FormatOps>(*st.cos_sin.store,
                                                      st.cos_sin.rounding_or(r.rounding), engine);
    if (s.attention_scaling) {
      scaling_ = std::make_unique<detail::FormatOps>(
          st.attention_scaling.compute, st.attention_scaling.rounding_or(r.rounding), engine);
      std::uint8_t fl = 0;
      scale_ = scaling_->from_rational(*s.attention_scaling, fl);
      if (st.attention_scaling.store)
        scaling_store_ = std::make_unique<detail::FormatOps>(
            *st.attention_scaling.store, st.attention_scaling.rounding_or(r.rounding), engine);
    }
    const Format& stored = scaling_ ? st.attention_scaling.stored() : st.cos_sin.stored();
    if (!(stored == st.table))
      table_ = std::make_unique<detail::FormatOps>(st.table, r.rounding, engine);
  }
  double operator()(float y) const {
    std::uint8_t fl = 0;
    Value v = Value::from_double_exact(static_cast<double>(y));
    if (cs_store_) v = cs_store_->convert(v, fl);
    if (scaling_) {
      v = scaling_->mul(scaling_->convert(v, fl), scale_, fl);
      if (scaling_store_) v = scaling_store_->convert(v, fl);
    }
    if (table_) v = table_->convert(v, fl);
    return v.to_double();
  }

 private:
  std::unique_ptr<detail::FormatOps> cs_store_, scaling_, scaling_store_, table_;
  Value scale_;
};

}  // namespace

std::vector<TrigBox> trig_boxes(const Schedule& s, const BoundedRealisation& r, std::size_t block,
                                std::uint64_t begin, std::uint64_t end) {
  check_bounded_applicable(s, r);
  if (block >= s.blocks.size())
    throw InvalidArgument("trig_boxes: block " + std::to_string(block) + " out of range (" +
                          std::to_string(s.blocks.size()) + " blocks)");
  if (end < begin) throw InvalidArgument("trig_boxes: end < begin");
  const std::vector<Realisation> members{r.base};
  detail::BlockEvaluator ev(s, block, members, r.base.arithmetic_engine());
  const LaterSteps later(s, r.base);
  const detail::FormatOps to_fp32(Format::fp32(), r.base.steps.cos_sin.rounding_or(r.base.rounding),
                                  r.base.arithmetic_engine());
  std::vector<TrigBox> out;
  out.reserve(end - begin);
  detail::Steps steps;
  for (std::uint64_t i = begin; i < end; ++i) {
    steps.clear();
    const RealisedPair p = ev.evaluate_one(0, i, &steps);
    TrigBox box;
    box.cos_cr = p.cos.to_double();
    box.sin_cr = p.sin.to_double();
    box.cos_lo = box.cos_hi = box.cos_cr;
    box.sin_lo = box.sin_hi = box.sin_cr;
    const Value* angle = nullptr;
    for (const auto& [name, v] : steps) {
      if (name == "angle") angle = &v;
    }
    if (angle != nullptr) {
      std::uint8_t fl = 0;
      const float x = static_cast<float>(to_fp32.convert(*angle, fl).to_double());
      if (!std::isfinite(x)) {
        throw InvalidArgument("bounded trig: the angle of block " + std::to_string(block) +
                              " at position " + std::to_string(i) +
                              " is not finite in fp32; accepted: schedules whose angles stay "
                              "finite over the positions asked");
      }
      box.argument = x;
      bool doc_c = true, doc_s = true;
      const auto [clo, chi] = allowed_results(r.model, x, true, &doc_c);
      const auto [slo, shi] = allowed_results(r.model, x, false, &doc_s);
      box.documented = doc_c && doc_s;
      box.raw_cos_lo = clo;
      box.raw_cos_hi = chi;
      box.raw_sin_lo = slo;
      box.raw_sin_hi = shi;
      box.cos_lo = later(clo);
      box.cos_hi = later(chi);
      box.sin_lo = later(slo);
      box.sin_hi = later(shi);
    }
    out.push_back(box);
  }
  return out;
}

}  // namespace ropesim::attention
