#pragma once
/// The ropesim version and the source commit it was built from, for the provenance every
/// written file records (issue "hardening": output people can cite).
#include <string_view>

namespace ropesim {

/// The project version, e.g. "0.1.0" (CMakeLists.txt `project(... VERSION ...)`).
std::string_view version();

/// `git describe --always --dirty` of the source tree at build time (12 hex digits, with
/// "-dirty" for uncommitted changes), or "unknown" outside a git checkout.
std::string_view source_commit();

}  // namespace ropesim
