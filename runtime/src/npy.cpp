// npy.cpp - numpy .npy files.
#include "modelc/npy.hpp"

#include <cstring>
#include <fstream>
#include <sstream>

namespace modelc {
namespace {

const char *npyDescr(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "<f4";
  case DType::F16:
    return "<f2";
  case DType::BF16:
    return nullptr; // numpy has no bfloat16
  case DType::I32:
    return "<i4";
  case DType::I64:
    return "<i8";
  case DType::Bool:
    return "|b1";
  }
  return nullptr;
}

std::optional<DType> dtypeOfDescr(const std::string &descr) {
  for (DType d : {DType::F32, DType::F16, DType::I32, DType::I64, DType::Bool})
    if (descr == npyDescr(d))
      return d;
  return std::nullopt;
}

/// The value of 'key' in the header dict, as its raw text.
std::string headerValue(const std::string &header, const std::string &key,
                        const std::string &path) {
  std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    throw Error("'" + path + "' is not a valid .npy file: the header lacks '" +
                key + "'");
  std::size_t colon = header.find(':', at);
  std::size_t begin = header.find_first_not_of(' ', colon + 1);
  std::size_t end;
  if (header[begin] == '(')
    end = header.find(')', begin) + 1;
  else if (header[begin] == '\'')
    end = header.find('\'', begin + 1) + 1;
  else
    end = header.find_first_of(",}", begin);
  if (colon == std::string::npos || begin == std::string::npos ||
      end == std::string::npos || end == 0)
    throw Error("'" + path + "' is not a valid .npy file: bad header");
  return header.substr(begin, end - begin);
}

} // namespace

Tensor read_npy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  char magic[8];
  in.read(magic, 8);
  if (in.gcount() != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw Error("'" + path + "' is not a .npy file");
  uint32_t headerLength = 0;
  unsigned char lengthBytes[4] = {};
  int major = static_cast<unsigned char>(magic[6]);
  int lengthSize = major == 1 ? 2 : 4;
  in.read(reinterpret_cast<char *>(lengthBytes), lengthSize);
  for (int i = lengthSize - 1; i >= 0; --i)
    headerLength = (headerLength << 8) | lengthBytes[i];
  std::string header(headerLength, '\0');
  in.read(header.data(), headerLength);
  if (static_cast<uint32_t>(in.gcount()) != headerLength)
    throw Error("'" + path + "' is truncated (in its header)");

  std::string descr = headerValue(header, "descr", path);
  descr = descr.substr(1, descr.size() - 2);
  std::optional<DType> dtype = dtypeOfDescr(descr);
  if (!dtype)
    throw Error("'" + path + "' has dtype '" + descr +
                "'; supported: <f4, <f2, <i4, <i8, |b1");
  if (headerValue(header, "fortran_order", path) != "False")
    throw Error("'" + path + "' is in Fortran order; save it C-contiguous");
  std::string shapeText = headerValue(header, "shape", path);
  std::vector<int64_t> shape;
  std::stringstream ss(shapeText.substr(1, shapeText.size() - 2));
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(' ') == std::string::npos)
      continue;
    shape.push_back(std::stoll(item));
  }
  Tensor tensor = Tensor::zeros(shape, *dtype);
  in.read(static_cast<char *>(tensor.mutable_data()),
          static_cast<std::streamsize>(tensor.nbytes()));
  if (static_cast<std::size_t>(in.gcount()) != tensor.nbytes())
    throw Error("'" + path + "' is truncated: " + tensor.describe() +
                " needs " + std::to_string(tensor.nbytes()) + " bytes of data");
  return tensor;
}

void write_npy(const std::string &path, const Tensor &tensor) {
  const char *descr = npyDescr(tensor.dtype());
  if (!descr)
    throw Error("cannot write " + tensor.describe() +
                " to .npy: numpy has no bfloat16");
  std::string shape = "(";
  for (int64_t d : tensor.shape())
    shape += std::to_string(d) + ", ";
  if (tensor.shape().size() > 1)
    shape.resize(shape.size() - 2);
  else if (tensor.shape().size() == 1)
    shape.resize(shape.size() - 1);
  shape += ")";
  std::string header = "{'descr': '" + std::string(descr) +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n', a multiple of 64.
  std::size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out)
    throw Error("cannot write '" + path + "': " + std::strerror(errno));
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t length = static_cast<uint16_t>(header.size());
  char lengthBytes[2] = {static_cast<char>(length & 0xff),
                         static_cast<char>(length >> 8)};
  out.write(lengthBytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char *>(tensor.data()),
            static_cast<std::streamsize>(tensor.nbytes()));
  if (!out)
    throw Error("cannot write '" + path + "': write failed");
}

} // namespace modelc
