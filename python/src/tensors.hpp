// tensors.hpp - numpy arrays and DLPack tensors to and from the runtime's
// modelc::Tensor, without copying where the memory allows it.
#ifndef MODELC_PYTHON_TENSORS_HPP
#define MODELC_PYTHON_TENSORS_HPP

#include "modelc/runtime.hpp"

#include <pybind11/pybind11.h>

namespace modelc::python {

/// An input ready for Model::run: the runtime tensor and what keeps its
/// memory alive (the array or the DLPack capsule; nothing when copied).
struct Input {
  Tensor tensor;
  pybind11::object owner;
  bool copied = false;
};

/// Borrows `value` (a numpy array or a DLPack producer) as input `spec`.
/// C-contiguous, aligned host memory (DLPack: kDLCPU, or pinned
/// kDLCUDAHost and kDLROCMHost memory) is borrowed; anything else of a dtype
/// the runtime knows is copied into a contiguous tensor. A dtype the runtime
/// does not know, or memory not on the host, is an Error naming the input.
Input borrowInput(const pybind11::handle &value, const TensorInfo &spec);

/// The numpy dtype name of `dtype` ("float32", ..., "bfloat16", "bool").
const char *numpyName(DType dtype);

/// A numpy array over `tensor`'s memory; the array owns the tensor. Not for
/// bf16, which numpy has no dtype for (run() refuses that before it runs).
pybind11::object toNumpy(Tensor tensor);

/// A DLPack capsule ("dltensor") over `tensor`'s memory; the capsule's
/// DLManagedTensor owns the tensor until its consumer calls the deleter.
pybind11::object toDlpack(Tensor tensor);

/// How many tensors toDlpack exported are not yet freed (for the tests:
/// modelc._core._exported_alive()).
int64_t exportedTensorsAlive();

} // namespace modelc::python

#endif // MODELC_PYTHON_TENSORS_HPP
