// A one-file program built with pkg-config instead of CMake (docs/LIBRARY.md):
//   c++ -std=c++20 mod_length.cpp $(pkg-config --cflags --libs ropesim) -o mod_length
// Compiles the MOD_3 atom (proofs/, THEORY §7 C4) into an fp16 transformer that accepts
// exactly the words whose length N satisfies N ≡ 2 (mod 3), and runs it (attention/).
#include <iostream>
#include <string>

#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"
#include "numeric/format.hpp"
#include "proofs/compiler/mod_atom.hpp"

int main() {
  using namespace ropesim;
  try {
    proofs::ModModelSpec spec;
    spec.atom.m = 3;
    spec.atom.r = 2;
    spec.atom.policy.format = numeric::Format::fp16();
    const proofs::ModModel built = proofs::mod_model(spec);
    for (const std::string word : {"a", "ab", "aba", "abab", "ababa"}) {
      const attention::RunResult result = attention::run(built.model, word);
      std::cout << "length " << word.size() << ": " << (result.accept ? "accept" : "reject")
                << "\n";
    }
  } catch (const InvalidArgument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
