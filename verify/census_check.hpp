// The census certificate check of ropesim-verify. Part of verify/ropesim_verify.cpp's
// translation unit: included inside its anonymous namespace after the number model (Format,
// round_to_F, same_bits), the angle expressions (Expr, enclose, Interval) and the realised
// rotations (Rotations), which it uses; it trusts nothing more than that file does.
//
// CENSUS CERTIFICATE (THEORY §3 Def 2.1, Prop 4.1; proofs/reports/certificate.hpp writes it).
// Window S..S+N−1. The verifier computes the classes of equal realised rotations itself, by
// partition refinement: every position starts in one class; block d = 0, 1, ... of R̂_i is realised
// for every position still in a class of two or more, and each class is split by the bit patterns
// of (cos, sin) in that block (NaN equals NaN, +0 differs from −0). A class that no block
// splits holds equal rotations (every block compared); a position alone in its class differs
// from every other position in some block. So the classes are exactly those of i ~ j ⟺
// R̂_i = R̂_j, and from them: `distinct` = the number of classes, `first_repeat` = the smallest
// j whose class has a smaller member i (null when all are distinct), `largest_class` = the
// size of the largest class and its smallest position (the first such class), each compared
// with the claim. Period claims: P is a period of the window iff class(i + P) = class(i) for
// every S ≤ i ≤ S+N−1−P (checked position by position for the claimed period and every listed
// unwitnessed P); a witness [P, i] shows P is not a period by class(i + P) ≠ class(i). A claim
// `period` P ≤ N/2 needs a witness for every P' < P; `period` null needs one for every
// P ≤ max_period but the unwitnessed P, which must be periods above N/2 (the census looks for
// periods up to N/2). Cost: at most N × blocks realisations (refused above
// kMaxCensusEvaluations, exit 2), a few blocks when all rotations are distinct.
//
// SPEED. Block d of R̂_i under r1 (an angle expression θ_d) is cos and sin of θ_d·i: θ_d is
// enclosed once per block at w = 64 bits (128 for p > 24), the angle by [θ_lo·i, θ_hi·i]
// (directed roundings), and cos, sin at its lower end by mpfr_sin_cos at w bits (each within
// half an ulp); with the interval's width and one ulp added on both sides this encloses the
// exact values, and when both ends round to the same element of F that is the realised value
// (rounding is monotone). Under r2 the angle φ = round_F(θ̂·î) is an element of F, whose cos and
// sin are enclosed the same way and cached per φ. An enclosure that straddles a rounding
// boundary (or i = 0, φ = 0, ±inf, NaN, a turn block) goes to the general path
// (Rotations::at, Ziv up to 2^16 bits). Positions are split over up to 4 threads (MPFR's
// caches are thread-local); the general path runs on the calling thread.

/// The largest positions × blocks a census certificate may need (proofs/reports/certificate.hpp
/// kMaxCensusCertificateWork, the same number).
constexpr double kMaxCensusEvaluations = 33554432;
/// The largest total length of the unwitnessed periods checked position by position.
constexpr double kMaxUnwitnessedChecks = 1e8;

/// (cos, sin) of one block at one position as the bit patterns of binary64 values (every
/// element of an F within fp64 is one exactly; NaN has one pattern).
struct PairKey {
  std::uint64_t c = 0, s = 0;
  bool operator==(const PairKey& o) const { return c == o.c && s == o.s; }
};

std::uint64_t bits_key(mpfr_srcptr x) {
  if (mpfr_nan_p(x)) return 0x7ff8000000000000ULL;
  const double d = mpfr_get_d(x, MPFR_RNDN);  // exact: x is in F ⊆ binary64
  std::uint64_t b = 0;
  std::memcpy(&b, &d, sizeof b);
  return b;
}

/// Encloses (cos x, sin x) for x in [lo, hi] and rounds both ends into F; false when an end
/// rounds differently (a rounding boundary may lie inside: use the general path).
class FastTrig {
 public:
  FastTrig(mpfr_prec_t w, const Format& F)
      : F_(F), c_(w), s_(w), width_(w), e_(w), a_(w), b_(w), ra_(F.p), rb_(F.p) {}

  bool run(mpfr_srcptr lo, mpfr_srcptr hi, PairKey& out) {
    if (mpfr_zero_p(lo) || !mpfr_number_p(lo) || !mpfr_number_p(hi)) return false;
    mpfr_sin_cos(s_, c_, lo, MPFR_RNDN);
    mpfr_sub(width_, hi, lo, MPFR_RNDU);
    return enclose_round(c_, out.c) && enclose_round(s_, out.s);
  }

 private:
  bool enclose_round(mpfr_srcptr v, std::uint64_t& key) {
    if (mpfr_zero_p(v)) return false;
    // |f(x) − v| ≤ |f(x) − f(lo)| + |f(lo) − v| ≤ width + ulp(v)/2 < width + 2^(EXP(v) − w)
    mpfr_set_ui_2exp(e_, 1, mpfr_get_exp(v) - mpfr_get_prec(v), MPFR_RNDU);
    mpfr_add(e_, e_, width_, MPFR_RNDU);
    mpfr_sub(a_, v, e_, MPFR_RNDD);
    mpfr_add(b_, v, e_, MPFR_RNDU);
    round_to_F(ra_, a_, F_);
    round_to_F(rb_, b_, F_);
    if (!same_bits(ra_, rb_)) return false;
    key = bits_key(ra_);
    return true;
  }
  const Format& F_;
  Mp c_, s_, width_, e_, a_, b_;
  FValue ra_, rb_;
};

// HF (the realisation `hf`, NUMERIC §3; attention/realisations/framework_presets.cpp): Hugging
// Face's default RoPE for a base-β schedule, every step correctly rounded: in fp32, e_k =
// round(2k/D), β̂ = round(round_binary64(β)) (the Python float, then the tensor), p_k =
// round(β̂^e_k), inv_freq_k = round(1/p_k); per position t = round(i), the angle
// round(inv_freq_k·t), cos and sin of it rounded; then the table in the activation format A
// (the certificate's format): round_A of each. Every fp32 step is done by MPFR at 24 bits with
// nearest-even (MPFR rounds pow, ×, ÷, cos and sin correctly), and each result is checked to
// be a normal fp32 number (so the 24-bit rounding is fp32's; otherwise exit 2). Covered: base-β
// schedules without Llama 3's scaling (no attention scaling step), nearest-even.
struct HfSteps {
  std::vector<Mp> inv_freq;  ///< per block, an fp32 value (24 bits)
};

void require_normal_fp32(mpfr_srcptr x, const std::string& what) {
  if (!mpfr_number_p(x)) throw Unreadable("hf: " + what + " is not finite in fp32: not covered");
  if (mpfr_zero_p(x)) return;
  const long e = mpfr_get_exp(x) - 1;
  if (e < -126 || e > 127)
    throw Unreadable("hf: " + what + " is not a normal fp32 number: not covered");
}

HfSteps hf_steps(const BaseDim& bd, std::size_t blocks) {
  HfSteps h;
  Mp beta64(53), beta(24), e(24), p(24);
  mpfr_set_q(beta64, bd.base.get_mpq_t(), MPFR_RNDN);  // the Python float β
  mpfr_set(beta, beta64, MPFR_RNDN);
  require_normal_fp32(beta, "beta");
  for (std::size_t k = 0; k < blocks; ++k) {
    mpfr_set_ui(e, 2 * k, MPFR_RNDN);  // exact
    mpfr_div_ui(e, e, static_cast<unsigned long>(bd.dim), MPFR_RNDN);
    require_normal_fp32(e, "the exponent of block " + std::to_string(k));
    mpfr_pow(p, beta, e, MPFR_RNDN);
    require_normal_fp32(p, "the power of block " + std::to_string(k));
    Mp inv(24);
    mpfr_ui_div(inv, 1, p, MPFR_RNDN);
    require_normal_fp32(inv, "inv_freq of block " + std::to_string(k));
    h.inv_freq.push_back(inv);
  }
  return h;
}

/// Block d of the hf table at position i as keys in A = F (see HF above).
PairKey hf_pair(const HfSteps& h, std::size_t d, std::uint64_t i, const Format& F, Mp& t, Mp& a,
                Mp& c, Mp& s, FValue& out) {
  mpfr_set_ui(t, i, MPFR_RNDN);
  require_normal_fp32(t, "the position");
  mpfr_mul(a, h.inv_freq[d], t, MPFR_RNDN);
  require_normal_fp32(a, "the angle");
  mpfr_sin_cos(s, c, a, MPFR_RNDN);
  require_normal_fp32(c, "cos");
  require_normal_fp32(s, "sin");
  PairKey key;
  round_to_F(out, c, F);
  key.c = bits_key(out);
  round_to_F(out, s, F);
  key.s = bits_key(out);
  return key;
}

/// Realises block d at the positions S + offsets[k] into keys[k] (the census's comparison
/// key), fast where it can and by Rotations::at otherwise (see SPEED above).
void realise_block(Rotations& R, const HfSteps* hf, std::size_t d, std::uint64_t S,
                   const std::vector<std::uint32_t>& offsets, std::vector<PairKey>& keys) {
  const Format& F = R.format();
  if (hf) {
    keys.assign(offsets.size(), PairKey{});
    const std::size_t threads =
        std::min<std::size_t>(std::max(1u, std::min(std::thread::hardware_concurrency(), 4u)),
                              std::max<std::size_t>(1, offsets.size() / 4096));
    std::vector<std::string> errors(threads);
    auto work = [&](std::size_t th) {
      try {
        Mp t(24), a(24), c(24), s(24);
        FValue out(F.p);
        for (std::size_t k = th; k < offsets.size(); k += threads)
          keys[k] = hf_pair(*hf, d, S + offsets[k], F, t, a, c, s, out);
      } catch (const Unreadable& e) {
        errors[th] = e.what();
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t th = 1; th < threads; ++th) pool.emplace_back(work, th);
    work(0);
    for (auto& th : pool) th.join();
    for (const auto& e : errors)
      if (!e.empty()) throw Unreadable(e);
    return;
  }
  const Block& block = R.block(d);
  const std::string& r = R.realisation();
  keys.assign(offsets.size(), PairKey{});
  std::vector<char> done(offsets.size(), 0);
  const mpfr_prec_t w = F.p > 24 ? 128 : 64;
  const bool fast = (r == "r1" && !block.turn) || r == "r2";
  Interval theta(w);
  bool theta_ok = false;
  if (fast && r == "r1") theta_ok = enclose(*block.theta, theta);
  if (fast && (r == "r2" || theta_ok)) {
    const unsigned hw = std::thread::hardware_concurrency();
    const std::size_t threads = std::min<std::size_t>(
        std::max(1u, std::min(hw, 4u)), std::max<std::size_t>(1, offsets.size() / 4096));
    auto work = [&](std::size_t t) {
      FastTrig trig(w, F);
      Mp lo(w), hi(w), pos(72);
      FValue i_hat(F.p), phi(F.p);
      std::unordered_map<std::uint64_t, PairKey> cache;  // r2: φ's key → (cos, sin)
      for (std::size_t k = t; k < offsets.size(); k += threads) {
        const std::uint64_t i = S + offsets[k];
        if (r == "r1") {
          mpfr_mul_ui(lo, theta.lo, i, MPFR_RNDD);
          mpfr_mul_ui(hi, theta.hi, i, MPFR_RNDU);
          done[k] = trig.run(lo, hi, keys[k]) ? 1 : 0;
          continue;
        }
        mpfr_set_ui(pos, i, MPFR_RNDN);  // exact: i < 2^63 < 2^72
        round_to_F(i_hat, pos, F);
        // φ = round_F(θ̂ · î), the product exact at 2p + 2 bits first
        Mp prod(2 * F.p + 2);
        mpfr_mul(prod, R.theta_hat(d), i_hat, F.rnd);
        round_to_F(phi, prod, F);
        if (!mpfr_number_p(phi) || mpfr_zero_p(phi)) continue;
        const std::uint64_t key = bits_key(phi);
        if (auto it = cache.find(key); it != cache.end()) {
          keys[k] = it->second;
          done[k] = 1;
          continue;
        }
        mpfr_set(lo, phi, MPFR_RNDN);  // exact: p ≤ 53 < w
        if (trig.run(lo, lo, keys[k])) {
          cache.emplace(key, keys[k]);
          done[k] = 1;
        }
      }
    };
    std::vector<std::thread> pool;
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work, t);
    work(0);
    for (auto& th : pool) th.join();
  }
  for (std::size_t k = 0; k < offsets.size(); ++k) {
    if (done[k]) continue;
    const auto& cs = R.at(d, S + offsets[k]);
    keys[k] = {bits_key(cs.first), bits_key(cs.second)};
  }
}

/// The classes of equal realised rotations on S..S+N−1: cls[o] = the smallest offset of
/// position S + o's class (see the header: partition refinement).
std::vector<std::uint32_t> rotation_classes(Rotations& R, const HfSteps* hf, std::uint64_t S,
                                            std::uint64_t N) {
  std::vector<std::uint32_t> cls(N, 0), active(N);
  for (std::uint32_t o = 0; o < N; ++o) active[o] = o;
  std::vector<PairKey> keys;
  std::vector<std::uint32_t> order, next;
  for (std::size_t d = 0; d < R.blocks() && !active.empty(); ++d) {
    realise_block(R, hf, d, S, active, keys);
    order.resize(active.size());
    for (std::uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    auto tuple = [&](std::uint32_t k) {
      return std::make_tuple(cls[active[k]], keys[k].c, keys[k].s, active[k]);
    };
    std::sort(order.begin(), order.end(),
              [&](std::uint32_t a, std::uint32_t b) { return tuple(a) < tuple(b); });
    next.clear();
    for (std::size_t g = 0; g < order.size();) {
      std::size_t h = g + 1;
      const std::uint32_t a = order[g];
      while (h < order.size() && cls[active[order[h]]] == cls[active[a]] &&
             keys[order[h]] == keys[a])
        ++h;
      const std::uint32_t id = active[a];  // the group's smallest offset (sorted by offset last)
      for (std::size_t x = g; x < h; ++x) {
        cls[active[order[x]]] = id;
        if (h - g > 1) next.push_back(active[order[x]]);
      }
      g = h;
    }
    active.swap(next);
  }
  return cls;
}

/// Reads [a, b] of two non-negative integers, or null.
std::optional<std::pair<std::uint64_t, std::uint64_t>> read_pair(const json& j,
                                                                 const std::string& item) {
  if (j.is_null()) return std::nullopt;
  if (!j.is_array() || j.size() != 2 || !j[0].is_number_unsigned() || !j[1].is_number_unsigned())
    throw Unreadable(item + ": expected [i, j] of non-negative integers or null");
  return std::make_pair(j[0].get<std::uint64_t>(), j[1].get<std::uint64_t>());
}

void check_census(const json& c) {
  only_keys(c,
            {"certificate", "version", "schedule", "realization", "format", "rounding", "blocks",
             "start", "positions", "distinct", "first_repeat", "largest_class", "max_period",
             "period", "witnesses", "unwitnessed"},
            "census certificate");
  const Format F = read_format(c.at("format"), c.at("rounding").get<std::string>());
  if (F.p > 53 || F.emin < -1022 || F.emax > 1023)
    throw Unreadable("format " + F.name + ": census certificates are covered within fp64");
  // hf is realised by its own steps (HF above); Rotations then only holds the blocks
  const std::string realization = c.at("realization").get<std::string>();
  auto blocks = checked_schedule(c);
  std::optional<HfSteps> hf;
  if (realization == "hf") {
    const auto bd = schedule_base(c.at("schedule").get<std::string>(), blocks.size());
    if (!bd || bd->llama3)
      throw Unreadable(
          "realization hf is covered on base-beta schedules without llama3 scaling "
          "(conventional, partial and the presets without rope_scaling)");
    if (F.rnd != MPFR_RNDN) throw Unreadable("realization hf is covered with nearest-even only");
    hf = hf_steps(*bd, blocks.size());
  }
  Rotations R(std::move(blocks), hf ? std::string("r1") : realization, F);
  const std::uint64_t S = u64(c, "start"), N = u64(c, "positions"), Pmax = u64(c, "max_period");
  if (N < 2 || S > (std::uint64_t{1} << 63) - N) throw Invalid("window: bad start/positions");
  if (static_cast<double>(N) * static_cast<double>(R.blocks()) > kMaxCensusEvaluations)
    throw Unreadable("census: " + std::to_string(N) + " positions x " + std::to_string(R.blocks()) +
                     " blocks is more than 2^25 realisations to check: not checked");
  const std::uint64_t last = S + N - 1;
  std::optional<std::uint64_t> period;
  if (!c.at("period").is_null()) period = u64(c, "period");
  if (period && (*period < 1 || *period > N / 2))
    throw Invalid("period: " + std::to_string(*period) + " is not in 1..N/2");
  if (!period && (Pmax < 1 || Pmax > N - 1)) throw Invalid("max_period: not in 1..N-1");

  const std::vector<std::uint32_t> cls = rotation_classes(R, hf ? &*hf : nullptr, S, N);

  // distinct, first repeat, largest class
  std::vector<std::uint64_t> size(N, 0);
  std::uint64_t distinct = 0;
  std::optional<std::pair<std::uint64_t, std::uint64_t>> first_repeat;
  for (std::uint64_t o = 0; o < N; ++o) {
    if (size[cls[o]]++ == 0) ++distinct;
    if (!first_repeat && cls[o] != o) first_repeat = std::make_pair(S + cls[o], S + o);
  }
  std::uint64_t largest = 0, largest_at = 0;
  for (std::uint64_t o = 0; o < N; ++o) {
    if (size[o] > largest) {
      largest = size[o];
      largest_at = S + o;
    }
  }
  if (u64(c, "distinct") != distinct)
    throw Invalid("distinct: the window has " + std::to_string(distinct) +
                  " distinct realised rotations, not " + std::to_string(u64(c, "distinct")));
  if (read_pair(c.at("first_repeat"), "first_repeat") != first_repeat)
    throw Invalid("first_repeat: it is " + (first_repeat
                                                ? "[" + std::to_string(first_repeat->first) + ", " +
                                                      std::to_string(first_repeat->second) + "]"
                                                : std::string("null (all distinct)")));
  if (read_pair(c.at("largest_class"), "largest_class") != std::make_pair(largest, largest_at))
    throw Invalid("largest_class: it is [" + std::to_string(largest) + ", " +
                  std::to_string(largest_at) + "]");

  auto is_period = [&](std::uint64_t P) {
    for (std::uint64_t o = 0; o + P < N; ++o)
      if (cls[o + P] != cls[o]) return false;
    return true;
  };
  const std::uint64_t covered = period ? *period - 1 : Pmax;
  std::vector<bool> seen(covered + 1, false);
  double unwitnessed_work = 0;
  for (const auto& u : c.at("unwitnessed")) {
    if (!u.is_number_unsigned()) throw Unreadable("unwitnessed: expected non-negative integers");
    const std::uint64_t P = u.get<std::uint64_t>();
    if (period || P > covered || P <= N / 2 || seen[P])
      throw Invalid("unwitnessed P = " + std::to_string(P) +
                    ": only candidate periods above N/2 may lack a witness");
    unwitnessed_work += static_cast<double>(N - P);
    if (unwitnessed_work > kMaxUnwitnessedChecks)
      throw Unreadable("unwitnessed: more than 1e8 comparisons to check: not checked");
    if (!is_period(P))
      throw Invalid("unwitnessed P = " + std::to_string(P) + ": it is not a period (R^_(i+" +
                    std::to_string(P) + ") != R^_i for some i)");
    seen[P] = true;
  }
  for (const auto& w : c.at("witnesses")) {
    if (!w.is_array() || w.size() != 2 || !w[0].is_number_unsigned() || !w[1].is_number_unsigned())
      throw Unreadable("witnesses: expected [P, i] of non-negative integers");
    const std::uint64_t P = w[0].get<std::uint64_t>(), i = w[1].get<std::uint64_t>();
    const std::string item =
        "witness for P = " + std::to_string(P) + " (i = " + std::to_string(i) + ")";
    if (P < 1 || P > covered || seen[P]) throw Invalid(item + ": P not expected or repeated");
    if (i < S || P > last - i)
      throw Invalid(item + ": outside the window " + std::to_string(S) + ".." +
                    std::to_string(last));
    if (cls[i - S] == cls[i + P - S])
      throw Invalid(item + ": R^_(i+P) = R^_i (the same realised rotation in every block)");
    seen[P] = true;
  }
  for (std::uint64_t P = 1; P <= covered; ++P)
    if (!seen[P]) throw Invalid("witness for P = " + std::to_string(P) + ": missing");
  if (period && !is_period(*period)) {
    std::uint64_t o = 0;
    while (cls[o + *period] == cls[o]) ++o;
    throw Invalid("period P = " + std::to_string(*period) + ": R^_" +
                  std::to_string(S + o + *period) + " != R^_" + std::to_string(S + o));
  }
}
