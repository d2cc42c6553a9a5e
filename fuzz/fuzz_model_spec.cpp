// attention::parse_model, the model spec JSON reader (model_spec.hpp; docs/MODEL_SPEC.md).
// Round trip: model_to_json of a parsed model reads back (from its text and from the JSON
// value) to a model with the same spec.
#include "attention/transformer/model_spec.hpp"
#include "fuzz/fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return ropesim::fuzz::run(data, size, [](std::string_view text) {
    using ropesim::fuzz::require;
    const auto model = ropesim::attention::parse_model(text);
    const nlohmann::json spec = ropesim::attention::model_to_json(model);
    const std::string dumped = spec.dump();
    const auto from_text = ropesim::attention::parse_model(dumped);
    require(ropesim::attention::model_to_json(from_text) == spec,
            "saved spec does not load back to the same model: " + dumped.substr(0, 200));
    const auto from_json = ropesim::attention::model_from_json(spec);
    require(ropesim::attention::model_to_json(from_json) == spec,
            "model_from_json(model_to_json(m)) differs: " + dumped.substr(0, 200));
  });
}
