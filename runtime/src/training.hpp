// training.hpp - writable weights of a training model (training.cpp).
#ifndef MODELC_RUNTIME_TRAINING_HPP
#define MODELC_RUNTIME_TRAINING_HPP

#include "modelc/abi.h"
#include "weights.hpp"

namespace modelc::detail {

/// Gives every weight the model writes (MODELC_WEIGHT_WRITABLE) a copy of
/// its own in `weights`, so runs write the model's memory, never the
/// mapped model.so or weights file. Sharded optimizer state that rank
/// `rank` of `size` does not own gets none (its pointer is null).
void makeWritableCopies(HostWeights &weights, const modelc_model_desc &desc,
                        int rank, int size);

} // namespace modelc::detail

#endif // MODELC_RUNTIME_TRAINING_HPP
