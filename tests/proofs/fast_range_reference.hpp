#pragma once
// A second implementation of the candidate algorithm's evaluation (proofs/range/fast_range.hpp
// certified_range_fast), the one the chunked, threaded path is compared with field by field
// (test_fast_range_chunks.cpp).
#include "proofs/range/fixed_offset_head.hpp"

namespace fast_range_test {

/// The certified range by candidate offsets, computed the plain way: every position realised
/// at once (attention::realise_head), every query and key through attention::head_query /
/// head_key and kept, the candidate offsets listed up front (proofs::candidate_offsets), each
/// query's competitors in increasing j, the gap decided in exact rationals. One thread, no
/// key store, memory 16·head_dim bytes and more per position: for tests (max_length in the
/// thousands). Returns what certified_range_fast promises: n_max, at_limit, the failure's
/// query, competitor, offset, gap and scores, scores_evaluated, candidate_offsets,
/// error_bound, fast_kernel, algorithm "candidates". Throws ropesim::InvalidArgument where
/// certified_range_fast does (outside the domain, max_length outside 1..kMaxScanLength).
ropesim::proofs::CertifiedRange reference_range_by_candidates(
    const ropesim::proofs::FixedOffsetHead& head, const ropesim::proofs::ScanOptions& options);

}  // namespace fast_range_test
