// Tokenising a word into the model's alphabet (THEORY §2). See transformer.hpp.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <string>

#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

// ---------------------------------------------------------------------------------------------
// Running a model
// ---------------------------------------------------------------------------------------------

std::vector<std::string> tokenize(const Model& model, std::string_view word) {
  std::vector<std::string> pieces;
  const bool spaced = std::any_of(
      word.begin(), word.end(), [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
  if (spaced) {
    std::size_t k = 0;
    while (k < word.size()) {
      while (k < word.size() && std::isspace(static_cast<unsigned char>(word[k]))) ++k;
      std::size_t e = k;
      while (e < word.size() && !std::isspace(static_cast<unsigned char>(word[e]))) ++e;
      if (e > k) pieces.emplace_back(word.substr(k, e - k));
      k = e;
    }
  } else {
    // UTF-8 code points.
    std::size_t k = 0;
    while (k < word.size()) {
      const unsigned char c = static_cast<unsigned char>(word[k]);
      std::size_t len = c < 0x80           ? 1
                        : (c >> 5) == 0x6  ? 2
                        : (c >> 4) == 0xE  ? 3
                        : (c >> 3) == 0x1E ? 4
                                           : 1;
      len = std::min(len, word.size() - k);
      pieces.emplace_back(word.substr(k, len));
      k += len;
    }
  }
  for (const auto& p : pieces) {
    if (std::find(model.embedding.alphabet.begin(), model.embedding.alphabet.end(), p) ==
        model.embedding.alphabet.end()) {
      throw InvalidArgument("symbol '" + p + "' is not in the alphabet {" +
                            fmt::format("{}", fmt::join(model.embedding.alphabet, ", ")) +
                            "}; a word is read character by character, or as "
                            "whitespace-separated symbols");
    }
  }
  return pieces;
}

}  // namespace ropesim::attention
