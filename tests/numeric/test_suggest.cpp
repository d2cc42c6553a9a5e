// core/suggest.hpp ("did you mean") and the PyTorch dtype aliases of parse_format.
#include <catch2/catch.hpp>

#include "core/error.hpp"
#include "core/suggest.hpp"
#include "numeric/format.hpp"

using namespace ropesim::numeric;
using ropesim::did_you_mean;
using ropesim::edit_distance;

TEST_CASE("edit_distance: optimal string alignment, case ignored", "[suggest]") {
  // by hand: one transposition, one insertion, one substitution, nothing, everything
  CHECK(edit_distance("fp61", "fp16") == 1);
  CHECK(edit_distance("lama2-7b", "llama2-7b") == 1);
  CHECK(edit_distance("fp61", "fp64") == 1);
  CHECK(edit_distance("BF16", "bf16") == 0);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("abc", "") == 3);
  // kitten → sitting: k→s, e→i, insert g (the textbook 3)
  CHECK(edit_distance("kitten", "sitting") == 3);
  // OSA, not Damerau: "ca" → "abc" is 3 (no edit of a transposed pair)
  CHECK(edit_distance("ca", "abc") == 3);
}

TEST_CASE("did_you_mean: the nearest names, or the names containing the text", "[suggest]") {
  const std::vector<std::string> names = {"llama2-7b", "llama3-8b", "mistral-7b", "qwen2-7b"};
  CHECK(did_you_mean("lama2-7b", names) == " (did you mean 'llama2-7b'?)");
  CHECK(did_you_mean("llama2-7b", names).empty());  // a name: nothing to suggest
  CHECK(did_you_mean("zzzzzz", names).empty());
  // "mistral" is 3 edits from mistral-7b (limit 2 for 7 letters) but contained in it
  CHECK(did_you_mean("mistral", names) == " (did you mean 'mistral-7b'?)");
  // two at distance 1: both, in list order
  CHECK(did_you_mean("fp61", std::vector<std::string>{"fp64", "fp32", "fp16"}) ==
        " (did you mean 'fp64' or 'fp16'?)");
}

TEST_CASE("parse_format: PyTorch dtype names are the presets", "[suggest]") {
  CHECK(parse_format("bfloat16") == Format::bf16());
  CHECK(parse_format("torch.bfloat16").name == "bf16");
  CHECK(parse_format("half") == Format::fp16());
  CHECK(parse_format("torch.float16") == Format::fp16());
  CHECK(parse_format("float") == Format::fp32());
  CHECK(parse_format("double") == Format::fp64());
  CHECK(parse_format("float8_e4m3fn") == Format::fp8e4m3());
  CHECK(parse_format("torch.float8_e5m2") == Format::fp8e5m2());
  CHECK(parse_format("bfloat16,subnormals=off").name == "bf16,subnormals=off");
  try {
    (void)parse_format("bfloat61");
    FAIL("bfloat61 accepted");
  } catch (const ropesim::InvalidArgument& e) {
    CHECK(std::string(e.what()).find("(did you mean 'bfloat16'?)") != std::string::npos);
  }
}
