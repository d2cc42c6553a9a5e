// Model::validate (THEORY §2): the shape and the content checks of a model, the per-tensor
// formats of mixed-format heads (mixed_attention.hpp) included. See transformer.hpp.
#include <cctype>
#include <cstdint>
#include <set>
#include <string>

#include "attention/transformer/head_blocks.hpp"
#include "attention/transformer/mixed_attention.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"

namespace ropesim::attention {

using detail::block_schedule;

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& problem) {
  throw InvalidArgument(path + ": " + problem);
}

void check_matrix(const Matrix& m, std::size_t rows, std::size_t cols, const std::string& path) {
  if (m.rows != rows || m.cols != cols || m.entries.size() != rows * cols) {
    bad(path, "expected " + std::to_string(rows) + " x " + std::to_string(cols) + ", got " +
                  std::to_string(m.rows) + " x " + std::to_string(m.cols));
  }
}

void check_vector(const std::vector<Value>& v, std::size_t n, bool may_be_empty,
                  const std::string& path) {
  if (v.empty() && may_be_empty) return;
  if (v.size() != n) {
    bad(path, "expected length " + std::to_string(n) + (may_be_empty ? " (or none)" : "") +
                  ", got " + std::to_string(v.size()));
  }
}

void check_norm(const LayerNormParams& n, std::size_t d, const std::string& path) {
  check_vector(n.gain, d, true, path + ".gain");
  check_vector(n.bias, d, true, path + ".bias");
}

bool is_symbol_char_safe(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (std::isspace(c)) return false;
  }
  return true;
}

}  // namespace

void Model::validate() const {
  if (d_model == 0) bad("d_model", "must be at least 1");
  if (!coordinates.empty()) {
    if (coordinates.size() != d_model) {
      bad("coordinates",
          std::to_string(coordinates.size()) + " names for d_model = " + std::to_string(d_model));
    }
    std::set<std::string> names;
    for (std::size_t k = 0; k < coordinates.size(); ++k) {
      if (coordinates[k].empty() || !names.insert(coordinates[k]).second) {
        bad("coordinates[" + std::to_string(k) + "]",
            "names must be non-empty and distinct, got '" + coordinates[k] + "'");
      }
    }
  }
  if (options.softmax == SoftmaxVariant::online &&
      (policy.summation == Summation::pairwise || policy.summation == Summation::exact)) {
    bad("architecture.softmax", "online needs summation sequential or wide-accumulator (got " +
                                    std::string(to_string(policy.summation)) + ")");
  }
  if (embedding.symbols.size() != embedding.alphabet.size()) {
    bad("embedding.symbols", std::to_string(embedding.symbols.size()) + " vectors for " +
                                 std::to_string(embedding.alphabet.size()) + " alphabet symbols");
  }
  std::set<std::string> seen;
  for (std::size_t k = 0; k < embedding.alphabet.size(); ++k) {
    const std::string& a = embedding.alphabet[k];
    if (!is_symbol_char_safe(a)) {
      bad("alphabet[" + std::to_string(k) + "]", "symbols must be non-empty without whitespace");
    }
    if (a == "BOS" || a == "EOS")
      bad("alphabet[" + std::to_string(k) + "]", "'" + a + "' is reserved");
    if (!seen.insert(a).second)
      bad("alphabet[" + std::to_string(k) + "]", "duplicate symbol '" + a + "'");
    check_vector(embedding.symbols[k], d_model, false, "embedding.symbols." + a);
  }
  if (options.bos) {
    check_vector(embedding.bos, d_model, false, "embedding.bos");
  } else {
    check_vector(embedding.bos, d_model, true, "embedding.bos");
  }
  check_vector(embedding.eos, d_model, false, "embedding.eos");
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Layer& layer = layers[l];
    const std::string lp = "layers[" + std::to_string(l) + "]";
    for (std::size_t h = 0; h < layer.heads.size(); ++h) {
      const AttentionHead& head = layer.heads[h];
      const std::string hp = lp + ".heads[" + std::to_string(h) + "]";
      if (head.head_dim == 0) bad(hp + ".head_dim", "must be at least 1");
      check_matrix(head.query, head.head_dim, d_model, hp + ".query");
      check_matrix(head.key, head.head_dim, d_model, hp + ".key");
      check_matrix(head.value, head.value_dim, d_model, hp + ".value");
      check_matrix(head.output, d_model, head.value_dim, hp + ".output");
      check_vector(head.query_bias, head.head_dim, true, hp + ".query_bias");
      check_vector(head.key_bias, head.head_dim, true, hp + ".key_bias");
      check_vector(head.value_bias, head.value_dim, true, hp + ".value_bias");
      if (head.formats) check_head_formats(*head.formats, options.softmax, hp + ".formats");
      if (!head.rotary.empty()) {
        std::size_t dim = 0;
        for (std::size_t s = 0; s < head.rotary.size(); ++s) {
          const RotarySegment& seg = head.rotary[s];
          const std::string sp = hp + ".rope[" + std::to_string(s) + "]";
          if (seg.realisations.size() != seg.schedule.blocks.size()) {
            bad(sp + ".realisation", std::to_string(seg.realisations.size()) +
                                         " realisations for " +
                                         std::to_string(seg.schedule.blocks.size()) +
                                         " rotary blocks of '" + seg.schedule.spec + "'");
          }
          for (std::size_t b = 0; b < seg.realisations.size(); ++b) {
            if (!seg.realisations[b]) continue;
            try {
              check_applicable(block_schedule(seg.schedule, b), *seg.realisations[b]);
            } catch (const InvalidArgument& e) {
              bad(sp + ".realisation", e.what());
            }
          }
          dim += seg.dimension();
        }
        if (dim != head.head_dim) {
          bad(hp + ".rope", "segments cover " + std::to_string(dim) + " coordinates, head_dim is " +
                                std::to_string(head.head_dim));
        }
      }
    }
    check_vector(layer.attention_bias, d_model, true, lp + ".attention_bias");
    if (layer.ffn) {
      const FeedForward& f = *layer.ffn;
      check_matrix(f.w1, f.w1.rows, d_model, lp + ".ffn.w1");
      check_vector(f.b1, f.w1.rows, true, lp + ".ffn.b1");
      check_matrix(f.w2, d_model, f.w1.rows, lp + ".ffn.w2");
      check_vector(f.b2, d_model, true, lp + ".ffn.b2");
    }
    if (layer.attention_norm) check_norm(*layer.attention_norm, d_model, lp + ".attention_norm");
    if (layer.ffn_norm) check_norm(*layer.ffn_norm, d_model, lp + ".ffn_norm");
  }
  if (final_norm) check_norm(*final_norm, d_model, "final_norm");
  check_vector(classifier.weights, d_model, false, "classifier.weights");
}

}  // namespace ropesim::attention
