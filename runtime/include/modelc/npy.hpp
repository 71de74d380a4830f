// modelc/npy.hpp - reading and writing numpy .npy files (format 1.0-3.0,
// little-endian, C order) as modelc::Tensor.
#ifndef MODELC_NPY_HPP
#define MODELC_NPY_HPP

#include "modelc/runtime.hpp"

#include <string>

namespace modelc {

/// Reads a .npy file; an Error names the file and what is wrong with it
/// (unsupported dtype, Fortran order, truncated data, ...).
Tensor read_npy(const std::string &path);

/// Writes `tensor` as a version 1.0 .npy file.
void write_npy(const std::string &path, const Tensor &tensor);

} // namespace modelc

#endif // MODELC_NPY_HPP
