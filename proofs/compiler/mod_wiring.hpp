#pragma once
/// Where a MOD_m^r head (C4, proofs/compiler/mod_atom.hpp; C4', proofs/compiler/bounded_mod.hpp)
/// reads and writes.
#include <cstddef>
#include <string>

#include "core/error.hpp"
#include "proofs/common/residual_space.hpp"

namespace ropesim::proofs {

/// Where the head reads and writes, by name in a model's residual space (THEORY §7 C1: gadgets
/// address named coordinates, never indices). The head's matrices have space.size() columns
/// (d_model). The default is a stand-alone head over the space `bos top out`.
struct ModWiring {
  ResidualSpace space{"bos", "top", "out"};
  std::string bos = "bos";     ///< 1 at BOS, 0 elsewhere (the BOS key and the value read it)
  std::string top = "top";     ///< ⊤: 1 at every token but BOS (the non-BOS keys read it)
  std::string output = "out";  ///< receives the head's output
};

/// The wiring's coordinates resolved to indices of its space (the head's matrices are indexed
/// by them; the names are the interface).
struct ModWiringIndices {
  std::size_t d_model = 0, bos = 0, top = 0, output = 0;
};

/// Resolves `w`'s names in w.space. Throws ropesim::InvalidArgument when a name is not in the
/// space (ResidualSpace::index) or when bos and top name the same coordinate.
inline ModWiringIndices resolve(const ModWiring& w) {
  ModWiringIndices i;
  i.d_model = w.space.size();
  i.bos = w.space.index(w.bos);
  i.top = w.space.index(w.top);
  i.output = w.space.index(w.output);
  if (i.bos == i.top)
    throw InvalidArgument("MOD head wiring: bos and top must be different coordinates, got '" +
                          w.bos + "' for both");
  return i;
}

}  // namespace ropesim::proofs
