// The schedules ropesim-verify knows, recomputed from their definitions. Part of
// verify/ropesim_verify.cpp's translation unit: included inside its anonymous namespace after
// the angle expressions (Expr, Parser, enclose) and Block, which it uses.
//
// SCHEDULES (THEORY §3). A certificate names its schedule (`schedule`, the spec ropesim
// prints: Schedule::spec) and lists its angles (`blocks`). The verifier does not take the
// angles from the certificate: it rebuilds them from the name with this file's own table — a
// deliberate second implementation of attention/schedules/schedule_families.cpp and
// data/models.json — checks that the listed blocks are the same angles (a turn: the same rational
// exactly; an expression: rational and equal when the definition is rational, otherwise enclosures
// at 512 bits that overlap, i.e. equal to within about 2^-500 relative), and computes with its own.
// A spelling not in the table is refused (exit 2). Covered spellings:
//   single:g=Q                        one block, θ = Q (Q: a rational "a" or "a/b")
//   periodic:A1/M1,A2/M2,...          θ = 2π·(a/m mod 1) per block (a turn)
//   conventional:base=Q,dim=D         θ_d = Q^(−2(d−1)/D), d = 1..D/2
//   partial:base=Q,dim=D,factor=F     conventional over rotary_dim = floor(D·F) (even, ≥ 2)
//   the model presets below           rope_theta, head_dim, partial_rotary_factor and the
//                                     llama3 rope_scaling of data/models.json, read by hand
// Llama 3's scaling (rope_type llama3; Hugging Face _compute_llama3_parameters): with
// L = original_max_position_embeddings, θ ↦ θ/factor when L·θ < 2π·low_freq_factor (wavelength
// above L/low_freq_factor), θ unchanged when L·θ > 2π·high_freq_factor, otherwise
// (1 − s)·θ/factor + s·θ with s = (L·θ/(2π) − low)/(high − low); the comparisons are decided by
// enclosures (θ·L = 2π·c with rational c is impossible for θ = β^e: π is transcendental, so
// refinement ends; 2^16 bits without a decision is refused).

/// A model preset (data/models.json): rope_theta, head_dim, partial_rotary_factor and, for
/// rope_type llama3, factor, low_freq_factor, high_freq_factor, original_max_position_embeddings.
struct PresetRow {
  const char* name;
  const char* base;
  long head_dim;
  const char* partial;  ///< partial_rotary_factor as a rational
  bool llama3;
  const char* factor;
  const char* low;
  const char* high;
  long original;
};

/// data/models.json, read by hand (tests/cli/test_verify.cpp checks every row against ropesim's
/// preset_schedule by a census certificate of each preset). The YaRN and M-RoPE presets are not
/// covered.
constexpr PresetRow kPresetTable[] = {
    {"llama2-7b", "10000", 128, "1", false, "", "", "", 0},
    {"codellama-7b", "1000000", 128, "1", false, "", "", "", 0},
    {"llama3-8b", "500000", 128, "1", false, "", "", "", 0},
    {"llama3.1-8b", "500000", 128, "1", true, "8", "1", "4", 8192},
    {"llama3.2-1b", "500000", 64, "1", true, "32", "1", "4", 8192},
    {"mistral-7b", "10000", 128, "1", false, "", "", "", 0},
    {"qwen2-7b", "1000000", 128, "1", false, "", "", "", 0},
    {"gemma-7b", "10000", 256, "1", false, "", "", "", 0},
    {"gpt-neox-20b", "10000", 96, "1/4", false, "", "", "", 0},
    {"phi-2", "10000", 80, "2/5", false, "", "", "", 0},
};

[[noreturn]] void unknown_schedule(const std::string& spec, const std::string& why) {
  std::string presets;
  for (const auto& p : kPresetTable) presets += std::string(presets.empty() ? "" : ", ") + p.name;
  throw Unreadable("schedule '" + spec + "' is not covered (" + why +
                   "); covered: single:g=Q, periodic:A/M,..., conventional:base=Q,dim=D, "
                   "partial:base=Q,dim=D,factor=F, " +
                   presets);
}

/// A rational as GMP writes it ("12", "-3/4", canonical); nullopt otherwise.
std::optional<mpq_class> canonical_rational(const std::string& s) {
  if (s.empty() || s.size() > 200) return std::nullopt;
  std::size_t k = s[0] == '-' ? 1 : 0;
  bool slash = false;
  for (std::size_t j = k; j < s.size(); ++j) {
    if (s[j] == '/' && !slash && j > k && j + 1 < s.size()) {
      slash = true;
    } else if (!std::isdigit(static_cast<unsigned char>(s[j]))) {
      return std::nullopt;
    }
  }
  mpq_class q(s, 10);
  if (q.get_den() == 0) return std::nullopt;
  q.canonicalize();
  if (q.get_str() != s) return std::nullopt;  // one spelling per number, as ropesim prints it
  return q;
}

ExprPtr rational_expr(const mpq_class& q) {
  auto n = std::make_shared<Expr>();
  n->kind = Expr::rational;
  n->q = q;
  return n;
}

ExprPtr binary_expr(Expr::Kind k, ExprPtr a, ExprPtr b) {
  auto n = std::make_shared<Expr>();
  n->kind = k;
  n->a = std::move(a);
  n->b = std::move(b);
  return n;
}

/// β^e when it is rational, else nullopt. With e = n/d in lowest terms, β^e is rational iff
/// β^(1/d) is (if r = β^(n/d) and β are rational, so is β^(1/d) = r^u·β^v for u·n + v·d = 1),
/// i.e. iff β's numerator and denominator are perfect d-th powers; then β^e = (β^(1/d))^n.
std::optional<mpq_class> rational_power(const mpq_class& beta, const mpq_class& e) {
  if (e == 0) return mpq_class(1);
  if (!e.get_den().fits_ulong_p() || !e.get_num().fits_slong_p()) return std::nullopt;
  const unsigned long d = e.get_den().get_ui();
  mpz_class rn, rd;
  if (mpz_root(rn.get_mpz_t(), beta.get_num_mpz_t(), d) == 0 ||
      mpz_root(rd.get_mpz_t(), beta.get_den_mpz_t(), d) == 0)
    return std::nullopt;
  const long n = e.get_num().get_si();
  if (n > 4096 || n < -4096) return std::nullopt;  // θ of a head: |n| < D/2; keep it small
  mpz_class pn, pd;
  mpz_pow_ui(pn.get_mpz_t(), rn.get_mpz_t(), static_cast<unsigned long>(n < 0 ? -n : n));
  mpz_pow_ui(pd.get_mpz_t(), rd.get_mpz_t(), static_cast<unsigned long>(n < 0 ? -n : n));
  mpq_class q = n < 0 ? mpq_class(pd, pn) : mpq_class(pn, pd);
  q.canonicalize();
  return q;
}

/// θ_d = β^(−2(d−1)/D) for d = 1..D/2 (1 for d = 1; rational when β^e is).
std::vector<Block> conventional_blocks(const mpq_class& base, long dim) {
  std::vector<Block> blocks;
  for (long k = 0; k < dim / 2; ++k) {
    Block b;
    mpq_class e(-2 * k, dim);
    e.canonicalize();
    if (auto q = rational_power(base, e)) {
      b.theta = rational_expr(*q);
    } else {
      auto n = std::make_shared<Expr>();
      n->kind = Expr::power;
      n->q = 1;
      n->beta = base;
      n->exponent = e;
      b.theta = n;
    }
    blocks.push_back(std::move(b));
  }
  return blocks;
}

/// The sign of a − b for reals given by expressions (never equal here; see the header).
int compare_exprs(const Expr& a, const Expr& b, const std::string& what) {
  for (mpfr_prec_t w = 128; w <= kMaxZivBits; w *= 2) {
    Interval x(w), y(w);
    if (!enclose(a, x) || !enclose(b, y)) continue;
    if (mpfr_less_p(x.hi, y.lo)) return -1;
    if (mpfr_greater_p(x.lo, y.hi)) return 1;
  }
  throw Unreadable("schedule: cannot decide " + what + " at 65536 bits: not checked");
}

/// Llama 3's frequency scaling of one angle (see the header).
ExprPtr llama3_scaled(const ExprPtr& theta, const PresetRow& row) {
  const mpq_class factor(row.factor), low(row.low), high(row.high), L(row.original);
  const ExprPtr two_pi = binary_expr(Expr::mul, rational_expr(2),
                                     std::make_shared<Expr>(Expr{Expr::pi, 0, 0, 0, {}, {}}));
  const ExprPtr Ltheta = binary_expr(Expr::mul, rational_expr(L), theta);
  const ExprPtr scaled = binary_expr(Expr::mul, theta, rational_expr(mpq_class(1 / factor)));
  if (compare_exprs(*binary_expr(Expr::mul, rational_expr(low), two_pi), *Ltheta,
                    "the llama3 band") > 0)
    return scaled;
  if (compare_exprs(*binary_expr(Expr::mul, rational_expr(high), two_pi), *Ltheta,
                    "the llama3 band") < 0)
    return theta;
  const ExprPtr smooth = binary_expr(
      Expr::mul, binary_expr(Expr::sub, binary_expr(Expr::div, Ltheta, two_pi), rational_expr(low)),
      rational_expr(mpq_class(1 / (high - low))));
  return binary_expr(
      Expr::add, binary_expr(Expr::mul, binary_expr(Expr::sub, rational_expr(1), smooth), scaled),
      binary_expr(Expr::mul, smooth, theta));
}

/// The blocks of a schedule spelling from the definitions (the header's table), or exit 2.
std::vector<Block> schedule_definition(const std::string& spec) {
  for (const auto& row : kPresetTable) {
    if (spec != row.name) continue;
    const mpq_class partial(row.partial);
    const mpq_class rd = partial * row.head_dim;
    const long rotary = mpz_class(rd.get_num() / rd.get_den()).get_si();
    auto blocks = conventional_blocks(mpq_class(row.base), rotary);
    if (row.llama3)
      for (auto& b : blocks) b.theta = llama3_scaled(b.theta, row);
    return blocks;
  }
  const auto colon = spec.find(':');
  if (colon == std::string::npos) unknown_schedule(spec, "not a preset of this table");
  const std::string kind = spec.substr(0, colon), rest = spec.substr(colon + 1);
  std::vector<std::string> items;
  for (std::size_t k = 0; k <= rest.size();) {
    const std::size_t comma = std::min(rest.find(',', k), rest.size());
    items.push_back(rest.substr(k, comma - k));
    k = comma + 1;
  }
  if (kind == "periodic") {
    std::vector<Block> blocks;
    for (const auto& item : items) {
      const auto slash = item.find('/');
      // ropesim writes a/m as given (m ≥ 1); the turn is a/m mod 1
      if (slash == std::string::npos || item.find('-') != std::string::npos)
        unknown_schedule(spec, "periodic needs a/m with a ≥ 0, m ≥ 1");
      mpq_class q(item, 10);
      if (q.get_den() == 0) unknown_schedule(spec, "m = 0");
      q.canonicalize();
      q -= mpz_class(q.get_num() / q.get_den());
      Block b;
      b.turn = q;
      blocks.push_back(std::move(b));
    }
    return blocks;
  }
  std::map<std::string, std::string> kv;
  for (const auto& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || !kv.emplace(item.substr(0, eq), item.substr(eq + 1)).second)
      unknown_schedule(spec, "expected key=value pairs, each key once");
  }
  auto rational_of = [&](const std::string& key) {
    const auto it = kv.find(key);
    if (it == kv.end()) unknown_schedule(spec, "missing " + key);
    const auto q = canonical_rational(it->second);
    if (!q) unknown_schedule(spec, key + " is not a rational as ropesim writes it");
    return *q;
  };
  auto keys = [&](std::size_t n) {
    if (kv.size() != n) unknown_schedule(spec, "unexpected keys");
  };
  if (kind == "single") {
    keys(1);
    Block b;
    b.theta = rational_expr(rational_of("g"));
    return {b};
  }
  if (kind == "conventional" || kind == "partial") {
    keys(kind == "partial" ? 3 : 2);
    const mpq_class base = rational_of("base"), dim = rational_of("dim");
    if (base <= 0 || dim.get_den() != 1 || dim < 2 || dim > 65536 || dim.get_num() % 2 != 0)
      unknown_schedule(spec, "need base > 0 and an even dim in 2..65536");
    long rotary = dim.get_num().get_si();
    if (kind == "partial") {
      const mpq_class factor = rational_of("factor");
      if (factor <= 0 || factor > 1) unknown_schedule(spec, "need 0 < factor <= 1");
      const mpq_class rd = factor * dim;
      rotary = mpz_class(rd.get_num() / rd.get_den()).get_si();
      if (rotary < 2 || rotary % 2 != 0) unknown_schedule(spec, "floor(dim*factor) must be even");
    }
    return conventional_blocks(base, rotary);
  }
  unknown_schedule(spec, "unknown kind '" + kind + "'");
}

/// β and the exponent dimension D of a base-β schedule (θ_k = β^(−2k/D)): what a framework's
/// pipeline computes inv_freq from. nullopt for single and periodic; `llama3` for the presets
/// with Llama 3's scaling.
struct BaseDim {
  mpq_class base;
  long dim = 0;
  bool llama3 = false;
};

std::optional<BaseDim> schedule_base(const std::string& spec, std::size_t blocks) {
  for (const auto& row : kPresetTable)
    if (spec == row.name)
      return BaseDim{mpq_class(row.base), static_cast<long>(2 * blocks), row.llama3};
  const std::string kind = spec.substr(0, spec.find(':'));
  if (kind != "conventional" && kind != "partial") return std::nullopt;
  // base=Q is the first key ropesim writes; schedule_definition has checked the spelling
  const std::size_t at = spec.find("base="), end = spec.find(',', at);
  return BaseDim{mpq_class(spec.substr(at + 5, end - at - 5), 10), static_cast<long>(2 * blocks),
                 false};
}

/// The certificate's schedule (`schedule`, `blocks`): the definition's blocks, after checking
/// that the listed ones are the same angles (Invalid naming the first block that is not).
std::vector<Block> checked_schedule(const json& c) {
  const std::string spec = c.at("schedule").get<std::string>();
  std::vector<Block> own = schedule_definition(spec);
  const std::vector<Block> listed = read_blocks(c.at("blocks"));
  if (listed.size() != own.size())
    throw Invalid("blocks: schedule " + spec + " has " + std::to_string(own.size()) +
                  " rotary blocks, the certificate lists " + std::to_string(listed.size()));
  for (std::size_t d = 0; d < own.size(); ++d) {
    const std::string item = "blocks: block " + std::to_string(d) + " is not " + spec + "'s";
    const Block &a = own[d], &b = listed[d];
    if (a.turn || b.turn) {
      if (!a.turn || !b.turn || *a.turn != *b.turn) throw Invalid(item);
      continue;
    }
    const auto qa = rational_value(*a.theta), qb = rational_value(*b.theta);
    if (qa && qb) {
      if (*qa != *qb) throw Invalid(item);
      continue;
    }
    Interval x(512), y(512);
    if (!enclose(*a.theta, x) || !enclose(*b.theta, y) || mpfr_less_p(x.hi, y.lo) ||
        mpfr_greater_p(x.lo, y.hi))
      throw Invalid(item);
  }
  return own;
}
