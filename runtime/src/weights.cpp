// weights.cpp - a model's weights in host memory: bound from a safetensors
// file or from the data embedded in model.so, checked against the weight
// table.
#include "weights.hpp"

#include "integrity.hpp"
#include "loader.hpp"

#include <set>

namespace modelc::detail {

namespace {

/// Binds every weight from the safetensors file `file`.
void bindFromFile(HostWeights &weights, const modelc_model_desc &desc,
                  const std::string &path, const std::string &file) {
  weights.file = std::make_unique<SafetensorsFile>(file);
  std::set<std::string> used;
  for (uint32_t i = 0; i < desc.num_weights; ++i) {
    const modelc_weight_desc &w = desc.weights[i];
    DType dtype = *dtypeFromCode(w.dtype);
    std::vector<int64_t> shape(w.shape, w.shape + w.rank);
    auto it = weights.file->tensors().find(w.name);
    if (it == weights.file->tensors().end())
      throw Error("weight '" + std::string(w.name) + "' is missing from '" +
                  file + "'");
    const SafetensorsEntry &entry = it->second;
    if (entry.dtype != dtype || entry.shape != shape)
      throw Error("weight '" + std::string(w.name) + "' in '" + file + "' is " +
                  describe(entry.dtype, entry.shape) + "; the model expects " +
                  describe(dtype, shape));
    used.insert(w.name);
    if (reinterpret_cast<uintptr_t>(entry.data) % 64 == 0) {
      weights.pointers[i] = entry.data;
    } else {
      // Kernels assume aligned data; copy once at load.
      weights.owned.push_back(Tensor::copy_of(entry.data, shape, dtype));
      weights.pointers[i] = weights.owned.back().data();
    }
  }
  for (const auto &[name, entry] : weights.file->tensors())
    if (!used.count(name))
      throw Error("'" + file + "' has a tensor '" + name + "' that model " +
                  modelName(path) + " does not use");
}

} // namespace

void bindWeights(HostWeights &weights, const modelc_model_desc &desc,
                 const modelc_file_seal &seal, const std::string &path,
                 const std::string &weightsFile) {
  std::string where = "model " + modelName(path);
  weights.pointers.assign(desc.num_weights, nullptr);
  std::string file = weightsFile;
  if (file.empty() && !desc.weight_data && desc.external_weights &&
      desc.num_weights) {
    file = desc.external_weights;
    // A relative path is relative to the model.so.
    if (!file.empty() && file[0] != '/') {
      std::size_t slash = path.rfind('/');
      if (slash != std::string::npos)
        file = path.substr(0, slash + 1) + file;
    }
    // The model's own file must be the one it was built with; another one
    // is a deliberate swap through LoadOptions::weights.
    std::string error;
    if (!integrity::checkWeights(file, seal, error))
      throw Error(error);
  }
  if (!file.empty()) {
    bindFromFile(weights, desc, path, file);
    return;
  }
  if (desc.num_weights == 0)
    return;
  if (!desc.weight_data)
    throw Error(where + " has no embedded weights; pass a safetensors file "
                        "in LoadOptions::weights");
  for (uint32_t i = 0; i < desc.num_weights; ++i) {
    const modelc_weight_desc &w = desc.weights[i];
    // Not in the data: its writable copy starts as zeros
    // (makeWritableCopies).
    if (startsAsZeros(desc, i))
      continue;
    if (w.offset > desc.weight_data_size ||
        w.nbytes > desc.weight_data_size - w.offset)
      throw Error(where + ": weight '" + std::string(w.name) +
                  "' lies outside the embedded weight data");
    weights.pointers[i] = desc.weight_data + w.offset;
  }
}

Tensor weightTensor(const modelc_weight_desc &w, const void *data) {
  return Tensor::from_host(data,
                           std::vector<int64_t>(w.shape, w.shape + w.rank),
                           *dtypeFromCode(w.dtype));
}

} // namespace modelc::detail
