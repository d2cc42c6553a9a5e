// Run a model spec (attention/): load examples/*.json and run it on words, as `ropesim run` does.
//   run_model MODEL.json WORD...
#include <iostream>

#include "attention/transformer/model_spec.hpp"
#include "attention/transformer/run.hpp"
#include "attention/transformer/transformer.hpp"
#include "core/error.hpp"

int main(int argc, char** argv) {
  using namespace ropesim;
  if (argc < 3) {
    std::cerr << "usage: run_model MODEL.json WORD...\n";
    return 2;
  }
  try {
    const attention::Model model = attention::load_model(argv[1]);
    std::cout << model.name << " (" << model.policy.format.name << ", " << model.layers.size()
              << " layers)\n";
    for (int k = 2; k < argc; ++k) {
      const attention::RunResult result = attention::run(model, argv[k]);
      std::cout << argv[k] << ": " << (result.accept ? "accept" : "reject") << " (output "
                << attention::exact_decimal(result.output) << ", EOS at position "
                << result.eos_position << ")\n";
    }
  } catch (const InvalidArgument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}
