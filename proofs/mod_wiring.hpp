#pragma once
/// Where a MOD_m^r head (C4, proofs/mod_atom.hpp; C4', proofs/bounded_mod.hpp) reads and writes.
#include <string>

#include "proofs/residual_space.hpp"

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

}  // namespace ropesim::proofs
