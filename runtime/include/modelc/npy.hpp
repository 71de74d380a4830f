// modelc/npy.hpp - reading and writing numpy .npy files (format 1.0-3.0,
// little-endian, C order) as modelc::Tensor.
#ifndef MODELC_NPY_HPP
#define MODELC_NPY_HPP

#include "modelc/runtime.hpp"

#include <iosfwd>
#include <string>

namespace modelc {

/// Reads a .npy file; an Error names the file and what is wrong with it
/// (unsupported dtype or version, Fortran order, a malformed header or
/// shape, a size beyond 64 bits, truncated data, ...). Sizes are checked
/// against the file before anything is allocated.
Tensor read_npy(const std::string &path);

/// Reads a .npy image from `in` (a file, or bytes in a std::istringstream);
/// errors as read_npy(path) gives them, naming it `name`.
Tensor read_npy(std::istream &in, const std::string &name);

/// Writes `tensor` as a version 1.0 .npy file.
void write_npy(const std::string &path, const Tensor &tensor);

} // namespace modelc

#endif // MODELC_NPY_HPP
