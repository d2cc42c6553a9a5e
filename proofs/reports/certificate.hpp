#pragma once
/// Certificates a sceptic can check: the evidence behind a census verdict
/// and a certified range, as JSON that `ropesim-verify` (verify/) re-checks from the
/// definitions with its own small trusted base (MPFR, GMP and a JSON reader; none of
/// ropesim's libraries). As SAT solvers export DRAT proofs: the claim travels with what makes
/// it checkable, and the checker does not trust the code that found it.
///
/// Every element of F is written exactly, as its hexadecimal floating-point text
/// (numeric::Value::to_hex: "0x1.8p+3", "-0x0p+0", "inf", "nan"), and every exact angle as the
/// text of numeric::ExactReal::to_string ("10000^(-1/64)", "1", "2*pi"; a periodic block as
/// its turn "a/m", θ = 2πa/m). The format is written by its parameters (precision p with the
/// hidden bit, IEEE emin and emax, subnormals, infinities): the claim is about that F.
/// Keys common to every kind: `certificate` ("census", "horizon" or "compile"), `version` (1),
/// `format` {name, kind, precision, emin, emax, subnormals, infinity}, `rounding`,
/// `realization`, `blocks` (one entry per rotary block: {"theta": text} or {"turn": "a/m"}).
#include <nlohmann/json.hpp>

#include "attention/census/census.hpp"
#include "attention/realisations/realisation.hpp"
#include "attention/schedules/schedule.hpp"
#include "proofs/compiler/compiler.hpp"
#include "proofs/range/fixed_offset_head.hpp"
#include "proofs/range/horizon.hpp"

namespace ropesim::proofs {

/// Version of the census certificate format: 2 states the census (distinct count, first
/// repeat, largest class, period) and is checked by re-realising every position.
inline constexpr int kCensusCertificateVersion = 2;

/// The largest positions × rotary blocks a census certificate may need: ropesim-verify
/// re-realises every position block by block until the classes of equal rotations are exact,
/// at most positions × blocks (cos, sin) pairs (2^25: about 20 s of MPFR on 2 cores; all
/// distinct usually needs a few blocks, docs/PERFORMANCE.md "Certificates"). verify/ has the
/// same constant.
inline constexpr double kMaxCensusCertificateWork = 33554432;

/// The census certificate of `result` (THEORY §3 Def 2.1 and Prop 4.1): the window
/// (`start`, `positions`), the census's claims — `distinct` (the number of distinct R̂_i),
/// `first_repeat` ([i, j] or null), `largest_class` ([size, smallest position]), `period` (P,
/// or null: no period ≤ N/2) — and the census's witnesses [P, i] (R̂_{i+P} ≠ R̂_i) for every
/// candidate period below P (periodic) or up to `max_period` (non-periodic), the P without one
/// in `unwitnessed`. ropesim-verify proves every claim by realising every position itself and
/// splitting the window into classes of equal rotations; the witnesses let it check the
/// period claims in time linear in N. Nothing is realised here: the cost is writing the JSON.
/// `result` must come from attention::census(s, r, ·) on a one-axis schedule. Throws
/// InvalidArgument like check_census_certificate_covered and for a result that does not
/// apply (not_applicable set).
nlohmann::json census_certificate(const attention::Schedule& s, const attention::Realisation& r,
                                  const attention::CensusResult& result);

/// Refuses (InvalidArgument, one line naming the accepted values and the estimate) a census
/// certificate ropesim-verify cannot check: a multi-axis schedule, a realisation other than
/// r1, r2, r3, a table format that is not binary floating point with subnormals and infinities
/// within fp64, nearest-away rounding, or positions × blocks above
/// kMaxCensusCertificateWork. Call it before the census runs, so nothing is computed or
/// written in vain.
void check_census_certificate_covered(const attention::Schedule& s, const attention::Realisation& r,
                                      std::uint64_t positions);

/// Throws InvalidArgument (one line, "--certificate: ...", naming what is accepted) when
/// ropesim-verify could not check a horizon certificate of this head whatever its range: a
/// schedule it does not rebuild (as check_census_certificate_covered), a realization other
/// than r1, r2, r3 (its Rotations; the framework pipelines hf, vllm, ... are not modelled there),
/// a format outside its number model or rounding nearest-away. horizon_certificate calls it;
/// `ropesim horizon --certificate` calls it before measuring, so nothing runs in vain.
void check_horizon_certificate_covered(const FixedOffsetSpec& spec);

/// The largest (N_max + 2)²/2 · blocks of score evaluations horizon_certificate accepts
/// (10^8: about a minute for ropesim, a few for the verifier, which recomputes them all).
inline constexpr double kMaxHorizonCertificateWork = 1e8;

/// The most block scores ropesim-verify computes for a horizon certificate's candidate
/// evidence (the competitors its per-query bounds leave × blocks, counted before scoring;
/// verify/ropesim_verify.cpp kMaxHorizonScores and kMaxHorizonFastScores, the same numbers):
/// with MPFR's operations, and with F's arithmetic emulated on binary64 (verify/fast_f.hpp:
/// nearest-even, p ≤ 26; about 5–25 ns a block score). horizon_certificate refuses more before
/// writing.
inline constexpr double kMaxHorizonCertificateScores = 2e8;
inline constexpr double kMaxHorizonCertificateFastScores = 4e9;
/// The verifier's per-query bounds are its own and somewhat wider than ropesim's: it scores
/// about 1.76 times the competitors ropesim scored (llama3-8b, bf16, C = 16384, k = 1, at
/// L = 2·10^3 and 10^5). horizon_certificate estimates its work with this ratio.
inline constexpr double kVerifierScoreRatio = 2;

/// The horizon certificate of a measured head (THEORY §6, RoPE-X eq. 10): the head (blocks,
/// weights w_d as exact rationals, C and f_large as elements of F, k, summation), the claim
/// (`n_max`, `at_limit`, `max_length`), the evidence, and the failing query with its
/// competitor, both scores and the exact gap (dyadic decimal). `evidence` "scan" (the
/// quadratic scan measured N_max): for every certified query k+1 ≤ i ≤ N_max+1 its realised
/// target score Ŝ_{i,i−k} and the largest other score Ŝ_{i,j} with its j (the first j on
/// ties), the per-query maxima the verifier compares item by item; cost the scan's score
/// evaluations, refused beyond kMaxHorizonCertificateWork. `evidence` "candidates" (the
/// candidate algorithm, proofs/range/fast_range.hpp): `error_bound` E (exact rational) and
/// `candidate_offsets` (candidate_offsets(head, E, ·) up to the largest competitor offset);
/// linear in N_max. `spec` is the head the report was measured on (its C is replaced by
/// report.C). Throws InvalidArgument when the scan's work exceeds kMaxHorizonCertificateWork
/// (naming N_max and the limit), when the candidates' check exceeds
/// kMaxHorizonCertificateScores (naming the estimate), for a head ropesim-verify does not
/// cover (check_horizon_certificate_covered), and like make_fixed_offset_head.
nlohmann::json horizon_certificate(const FixedOffsetSpec& spec, const HorizonReport& report);

/// The compile certificate of a compiled model (THEORY §7 C1, C4, C5), built from the
/// compiler's public result: the policy, f_large, the P-head re-binarisation claim (`past`:
/// f1, f2, the counts checked and the certified count, null = every count), every MOD_m^r
/// head's constants (C, b̂ = round_F(b_m), the non-BOS key weight w = round_F(Ĉ·b̂), the query
/// bias) and its realised score and margin per query residue, every Y^k head as an embedded
/// horizon certificate of the lower-bound claim N_max^(k) ≥ its n_max (`at_limit` set: every
/// query up to n_max + 1 leads by f_large), and the certified length (the minimum of the P
/// head's count and the Y^k ranges; null = every length). `options` are the ones compile()
/// ran with (policy, offset_schedule). `ropesim compile` adds `model_sha256` (the SHA-256 of
/// the model file it writes), by which ropesim-verify binds the certificate to that file.
/// Throws InvalidArgument for a model with the LayerNorm
/// mirror (its checks are not part of the certificate) and when a Y^k head's range is too
/// long to certify (kMaxHorizonCertificateWork).
nlohmann::json compile_certificate(const CompiledModel& compiled, const CompileOptions& options);

}  // namespace ropesim::proofs
