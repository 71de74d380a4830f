// weights.hpp - a model's weights in host memory: bound from a safetensors
// file or from the data embedded in model.so, checked against the weight
// table.
#ifndef MODELC_RUNTIME_WEIGHTS_HPP
#define MODELC_RUNTIME_WEIGHTS_HPP

#include "modelc/abi.h"
#include "modelc/runtime.hpp"
#include "safetensors.hpp"

#include <memory>
#include <string>
#include <vector>

namespace modelc::detail {

/// The weights of a model in host memory, one pointer per weight of the
/// table (64-byte aligned), and what keeps them alive.
struct HostWeights {
  std::vector<const void *> pointers;
  std::vector<Tensor> owned; // aligned copies of unaligned weights
  std::unique_ptr<SafetensorsFile> file;
};

/// Binds the weights of `desc` (the model at `path`): from `weightsFile`
/// when given, else from the model's external safetensors file (relative to
/// `path`, which must be the file `seal` recorded), else from its embedded
/// data. Every weight must be there with its dtype and shape, and a file may
/// hold no other tensor. Throws modelc::Error.
void bindWeights(HostWeights &weights, const modelc_model_desc &desc,
                 const modelc_file_seal &seal, const std::string &path,
                 const std::string &weightsFile);

/// The dtype and shape of weight `w` as a read-only host tensor at `data`.
Tensor weightTensor(const modelc_weight_desc &w, const void *data);

/// Whether weight `w` is written by the model and starts as zeros
/// (MODELC_WEIGHT_ZEROS): the embedded data does not hold it.
inline bool startsAsZeros(const modelc_model_desc &desc, uint32_t w) {
  return desc.weight_flags && (desc.weight_flags[w] & MODELC_WEIGHT_WRITABLE) &&
         (desc.weight_flags[w] & MODELC_WEIGHT_ZEROS);
}

/// The shard of optimizer state that weight `w` is (ABI 16), -1 when every
/// rank holds it.
inline int32_t weightShard(const modelc_model_desc &desc, uint32_t w) {
  return desc.weight_shards ? desc.weight_shards[w] : -1;
}

/// Whether rank `rank` of a run of `size` ranks holds weight `w`: every
/// rank but for sharded optimizer state, which its owner alone holds.
inline bool holdsWeight(const modelc_model_desc &desc, uint32_t w, int rank,
                        int size) {
  int32_t shard = weightShard(desc, w);
  return shard < 0 || modelc_shard_owner(shard, size) == rank;
}

} // namespace modelc::detail

#endif // MODELC_RUNTIME_WEIGHTS_HPP
