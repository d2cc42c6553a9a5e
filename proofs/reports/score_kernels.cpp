// The score check's rotation (proofs/reports/score_kernels.hpp ScoreRotation): the scalar
// reference and the same steps in lanes of 4 doubles, compiled for the x86-64 baseline and for
// AVX2 (chosen at run time), as attention/detail/fast_trig_batch.cpp does for the realisations.
// No FMA (the build has -ffp-contract=off, and "avx2" does not enable FMA), no reassociation:
// each lane performs rotate_scalar's IEEE binary64 operations in its order.
// 32-byte vectors passed between inline functions: GCC notes that their ABI differs with and
// without AVX (-Wpsabi); nothing here crosses a translation unit, so the note is moot.
#pragma GCC diagnostic ignored "-Wpsabi"
// The lanes and their rounding: numeric/lane_rounding.hpp.

#include "proofs/reports/score_kernels.hpp"

#include <cmath>
#include <limits>

#include "numeric/lane_rounding.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define ROPESIM_SCORE_AVX2 1
#else
#define ROPESIM_SCORE_AVX2 0
#endif

namespace ropesim::proofs {

namespace {

using numeric::lanes::kLanes;
using numeric::lanes::load;
using numeric::lanes::splat;
using numeric::lanes::store;
using numeric::lanes::V;

#define ROPESIM_SCORE_LANE inline __attribute__((always_inline))

// One rotation step on lanes of blocks: the table's (c, s) rounded into F when the path rounds
// it, the rotated pair in F (THEORY §2.1's order, or hf eager's q·cos + rotate_half(q)·sin),
// then into the output format when it differs.
ROPESIM_SCORE_LANE void rotate_lanes(const ScoreRotation& k, V x0, V x1, V c, V sn, V& y0, V& y1) {
  if (k.round_table) {
    c = numeric::lanes::round(k.lane_rf, c);
    sn = numeric::lanes::round(k.lane_rf, sn);
  }
  if (k.theory) {  // THEORY §2.1
    y0 = numeric::lanes::round(k.lane_rf, numeric::lanes::round(k.lane_rf, c * x0) -
                                              numeric::lanes::round(k.lane_rf, sn * x1));
    y1 = numeric::lanes::round(k.lane_rf, numeric::lanes::round(k.lane_rf, sn * x0) +
                                              numeric::lanes::round(k.lane_rf, c * x1));
  } else {  // hf eager: q·cos + rotate_half(q)·sin
    y0 = numeric::lanes::round(k.lane_rf, numeric::lanes::round(k.lane_rf, x0 * c) +
                                              numeric::lanes::round(k.lane_rf, -x1 * sn));
    y1 = numeric::lanes::round(k.lane_rf, numeric::lanes::round(k.lane_rf, x1 * c) +
                                              numeric::lanes::round(k.lane_rf, x0 * sn));
  }
  if (k.to_out) {
    y0 = numeric::lanes::round(k.lane_rout, y0);
    y1 = numeric::lanes::round(k.lane_rout, y1);
  }
}

ROPESIM_SCORE_LANE void rotate_body(const ScoreRotation& k, const double* x, const double* xr,
                                    const double* cos_row, const double* sin_row, double* y) {
  const std::size_t nb = k.nb, whole = nb / kLanes * kLanes;
  for (std::size_t j = 2 * nb; j < k.dim; ++j) y[j] = x[j];
  for (std::size_t d = 0; d < whole; d += kLanes) {
    V x0, x1;
    if (k.adjacent) {
      x0 = V{xr[2 * d], xr[2 * d + 2], xr[2 * d + 4], xr[2 * d + 6]};
      x1 = V{xr[2 * d + 1], xr[2 * d + 3], xr[2 * d + 5], xr[2 * d + 7]};
    } else {
      x0 = load(xr + d);
      x1 = load(xr + nb + d);
    }
    V y0, y1;
    rotate_lanes(k, x0, x1, load(cos_row + d), load(sin_row + d), y0, y1);
    if (k.adjacent) {
      for (std::size_t l = 0; l < kLanes; ++l) {
        y[2 * (d + l)] = y0[l];
        y[2 * (d + l) + 1] = y1[l];
      }
    } else {
      store(y + d, y0);
      store(y + nb + d, y1);
    }
  }
  // the last nb mod 4 blocks: lanes of one block each (the same operations)
  for (std::size_t d = whole; d < nb; ++d) {
    const std::size_t i0 = k.adjacent ? 2 * d : d, i1 = k.adjacent ? 2 * d + 1 : d + nb;
    const V x0 = splat(xr[i0]), x1 = splat(xr[i1]);
    V y0, y1;
    rotate_lanes(k, x0, x1, splat(cos_row[d]), splat(sin_row[d]), y0, y1);
    y[i0] = y0[0];
    y[i1] = y1[0];
  }
  if (k.to_f) {
    const std::size_t all = k.dim / kLanes * kLanes;
    for (std::size_t j = 0; j < all; j += kLanes)
      store(y + j, numeric::lanes::round(k.lane_rF, load(y + j)));
    for (std::size_t j = all; j < k.dim; ++j)
      y[j] = numeric::lanes::round(k.lane_rF, splat(y[j]))[0];
  }
}

#if ROPESIM_SCORE_AVX2
__attribute__((target("avx2"))) void rotate_avx2(const ScoreRotation& k, const double* x,
                                                 const double* xr, const double* cos_row,
                                                 const double* sin_row, double* y) {
  rotate_body(k, x, xr, cos_row, sin_row, y);
}
#endif
void rotate_baseline(const ScoreRotation& k, const double* x, const double* xr,
                     const double* cos_row, const double* sin_row, double* y) {
  rotate_body(k, x, xr, cos_row, sin_row, y);
}

}  // namespace

bool score_avx2_available() {
#if ROPESIM_SCORE_AVX2
  static const bool available = __builtin_cpu_supports("avx2") != 0;
  return available;
#else
  return false;
#endif
}

ScoreRotation::ScoreRotation(const numeric::Format& rotation_format,
                             const numeric::Format& output_format, const numeric::Format& f)
    : rotation(rotation_format),
      output(output_format),
      format(f),
      rf(rotation_format, numeric::Rounding::nearest_even),
      rout(output_format, numeric::Rounding::nearest_even),
      rF(f, numeric::Rounding::nearest_even) {
  using numeric::lanes::LaneRounding;
  const auto a = LaneRounding::of(rotation, rf), b = LaneRounding::of(output, rout),
             c = LaneRounding::of(format, rF);
  lanes_ = a && b && c;
  if (lanes_) {
    lane_rf = *a;
    lane_rout = *b;
    lane_rF = *c;
  }
}

void ScoreRotation::operands(const double* x, double* xr) const {
  for (std::size_t j = 0; j < dim; ++j) xr[j] = rf.round(x[j]);
}

void ScoreRotation::rotate_scalar(const double* x, const double* xr, const double* cos_row,
                                  const double* sin_row, double* y) const {
  for (std::size_t j = 0; j < dim; ++j) y[j] = x[j];
  for (std::size_t d = 0; d < nb; ++d) {
    const std::size_t i0 = adjacent ? 2 * d : d, i1 = adjacent ? 2 * d + 1 : d + nb;
    const double x0 = xr[i0], x1 = xr[i1];
    const double c = round_table ? rf.round(cos_row[d]) : cos_row[d];
    const double sn = round_table ? rf.round(sin_row[d]) : sin_row[d];
    double y0, y1;
    if (theory) {  // THEORY §2.1
      y0 = rf.sub(rf.mul(c, x0), rf.mul(sn, x1));
      y1 = rf.add(rf.mul(sn, x0), rf.mul(c, x1));
    } else {  // hf eager: q·cos + rotate_half(q)·sin
      y0 = rf.add(rf.mul(x0, c), rf.mul(-x1, sn));
      y1 = rf.add(rf.mul(x1, c), rf.mul(x0, sn));
    }
    y[i0] = to_out ? rout.round(y0) : y0;
    y[i1] = to_out ? rout.round(y1) : y1;
  }
  if (to_f)
    for (std::size_t j = 0; j < dim; ++j) y[j] = rF.round(y[j]);
}

void ScoreRotation::rotate_lanes(const double* x, const double* xr, const double* cos_row,
                                 const double* sin_row, double* y, ScoreIsa isa) const {
#if ROPESIM_SCORE_AVX2
  if (isa == ScoreIsa::avx2 && score_avx2_available())
    return rotate_avx2(*this, x, xr, cos_row, sin_row, y);
#else
  (void)isa;
#endif
  rotate_baseline(*this, x, xr, cos_row, sin_row, y);
}

}  // namespace ropesim::proofs
