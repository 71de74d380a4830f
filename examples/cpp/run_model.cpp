// run_model.cpp - load a model.so, describe it, run its first entry point on
// inputs of ones and print the first outputs.
//   run_model mlp.so
#include <modelc/runtime.hpp>

#include <iostream>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: run_model MODEL.so\n";
    return 2;
  }
  try {
    modelc::Model model = modelc::Model::load(argv[1]);
    const modelc::EntryInfo &entry = model.entries().front();
    std::vector<modelc::Tensor> inputs;
    for (const modelc::TensorInfo &info : entry.inputs) {
      if (info.dtype != modelc::DType::F32)
        throw modelc::Error("this example feeds f32 inputs only");
      modelc::Tensor t = modelc::Tensor::zeros(info.shape, info.dtype);
      for (int64_t i = 0; i < t.numel(); ++i)
        t.mutable_data_as<float>()[i] = 1.0f;
      inputs.push_back(std::move(t));
      std::cout << "input '" << info.name
                << "': " << modelc::describe(info.dtype, info.shape) << "\n";
    }
    std::vector<modelc::Tensor> outputs = model.run(entry.name, inputs);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      std::cout << "output '" << entry.outputs[k].name
                << "': " << outputs[k].describe() << " first values:";
      for (int64_t i = 0; i < std::min<int64_t>(4, outputs[k].numel()); ++i)
        if (outputs[k].dtype() == modelc::DType::F32)
          std::cout << " " << outputs[k].data_as<float>()[i];
      std::cout << "\n";
    }
  } catch (const modelc::Error &e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
