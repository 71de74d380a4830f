// npy.cpp - numpy .npy files.
#include "modelc/npy.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <istream>
#include <optional>
#include <vector>

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
  case DType::I8:
    return "|i1";
  case DType::I16:
    return "<i2";
  case DType::U8:
    return "|u1";
  case DType::U16:
    return "<u2";
  case DType::U32:
    return "<u4";
  case DType::U64:
    return "<u8";
  case DType::F64:
    return "<f8";
  }
  return nullptr;
}

std::optional<DType> dtypeOfDescr(const std::string &descr) {
  for (DType d :
       {DType::F32, DType::F16, DType::I32, DType::I64, DType::Bool, DType::I8,
        DType::I16, DType::U8, DType::U16, DType::U32, DType::U64, DType::F64})
    if (descr == npyDescr(d))
      return d;
  return std::nullopt;
}

[[noreturn]] void invalid(const std::string &name, const std::string &what) {
  throw Error("'" + name + "' is not a valid .npy file: " + what);
}

/// The value of 'key' in the header dict, as its raw text: a quoted string
/// with its quotes, a tuple with its parentheses, or a word.
std::string headerValue(const std::string &header, const std::string &key,
                        const std::string &name) {
  std::size_t at = header.find("'" + key + "'");
  if (at == std::string::npos)
    invalid(name, "the header lacks '" + key + "'");
  std::size_t colon = header.find_first_not_of(' ', at + key.size() + 2);
  if (colon == std::string::npos || header[colon] != ':')
    invalid(name, "no ':' after '" + key + "' in the header");
  std::size_t begin = header.find_first_not_of(' ', colon + 1);
  if (begin == std::string::npos)
    invalid(name, "no value for '" + key + "' in the header");
  std::size_t end;
  char first = header[begin];
  if (first == '(')
    end = header.find(')', begin);
  else if (first == '\'' || first == '"')
    end = header.find(first, begin + 1);
  else
    end = header.find_first_of(",}", begin);
  if (end == std::string::npos || end == begin)
    invalid(name, "the value of '" + key + "' in the header is " +
                      (end == begin ? "empty" : "not closed"));
  if (first == '(' || first == '\'' || first == '"')
    ++end;
  std::size_t last = header.find_last_not_of(' ', end - 1);
  return header.substr(begin, last + 1 - begin);
}

/// The dimensions of a shape tuple such as "(2, 3)", "(3,)" or "()".
std::vector<int64_t> parseShape(const std::string &text,
                                const std::string &name) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    invalid(name, "its shape " + text + " is not a tuple");
  std::vector<int64_t> shape;
  std::size_t pos = 1, close = text.size() - 1;
  while (pos < close) {
    std::size_t comma = std::min(text.find(',', pos), close);
    std::string item = text.substr(pos, comma - pos);
    std::size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    pos = comma + 1;
    if (b == std::string::npos) {
      // Only the end may be empty: "()", "( )", or after "(3,".
      if (comma == close)
        break;
      invalid(name, "its shape " + text + " has an empty dimension");
    }
    item = item.substr(b, e + 1 - b);
    if (item.size() > 1 && item.back() == 'L') // Python 2's long integers
      item.pop_back();
    uint64_t value = 0;
    bool ok = !item.empty();
    for (char c : item) {
      if (c < '0' || c > '9' ||
          value > (static_cast<uint64_t>(INT64_MAX) - (c - '0')) / 10) {
        ok = false;
        break;
      }
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    if (!ok)
      invalid(name, "its shape " + text + " has '" + item +
                        "', which is not a dimension (0 to 2^63-1)");
    shape.push_back(static_cast<int64_t>(value));
  }
  return shape;
}

/// The stream's bytes from the current position on, when it can tell.
std::optional<uint64_t> remainingBytes(std::istream &in) {
  std::streampos here = in.tellg();
  if (here < 0 || !in.seekg(0, std::ios::end))
    return std::nullopt;
  std::streampos end = in.tellg();
  in.seekg(here);
  if (end < here || !in)
    return std::nullopt;
  return static_cast<uint64_t>(end - here);
}

/// The header dict: `length` bytes, read in pieces so that a length the
/// file does not have allocates nothing big.
std::string readHeader(std::istream &in, uint32_t length,
                       const std::string &name) {
  std::optional<uint64_t> remaining = remainingBytes(in);
  if (remaining && length > *remaining)
    throw Error("'" + name + "' is truncated (in its header): the header " +
                "claims " + std::to_string(length) + " bytes, the file has " +
                std::to_string(*remaining) + " after the length");
  std::string header;
  constexpr std::size_t kPiece = 1 << 16;
  while (header.size() < length) {
    std::size_t piece = std::min<std::size_t>(kPiece, length - header.size());
    std::size_t old = header.size();
    header.resize(old + piece);
    in.read(header.data() + old, static_cast<std::streamsize>(piece));
    if (static_cast<std::size_t>(in.gcount()) != piece)
      throw Error("'" + name + "' is truncated (in its header)");
  }
  return header;
}

} // namespace

Tensor read_npy(std::istream &in, const std::string &name) {
  char magic[8];
  in.read(magic, 8);
  if (in.gcount() != 8 || std::memcmp(magic, "\x93NUMPY", 6) != 0)
    throw Error("'" + name + "' is not a .npy file");
  int major = static_cast<unsigned char>(magic[6]);
  if (major < 1 || major > 3)
    throw Error("'" + name + "' is .npy format version " +
                std::to_string(major) + "." +
                std::to_string(static_cast<unsigned char>(magic[7])) +
                "; supported: 1.0 to 3.0");
  unsigned char lengthBytes[4] = {};
  int lengthSize = major == 1 ? 2 : 4;
  in.read(reinterpret_cast<char *>(lengthBytes), lengthSize);
  if (in.gcount() != lengthSize)
    throw Error("'" + name + "' is truncated (in its header)");
  uint32_t headerLength = 0;
  for (int i = lengthSize - 1; i >= 0; --i)
    headerLength = (headerLength << 8) | lengthBytes[i];
  std::string header = readHeader(in, headerLength, name);

  std::string descr = headerValue(header, "descr", name);
  if (descr.size() < 2 || (descr.front() != '\'' && descr.front() != '"'))
    invalid(name, "its descr " + descr + " is not a quoted string");
  descr = descr.substr(1, descr.size() - 2);
  std::optional<DType> dtype = dtypeOfDescr(descr);
  if (!dtype)
    throw Error("'" + name + "' has dtype '" + descr +
                "'; supported: <f4, <f2, <i4, <i8, |b1");
  if (headerValue(header, "fortran_order", name) != "False")
    throw Error("'" + name + "' is in Fortran order; save it C-contiguous");
  std::vector<int64_t> shape =
      parseShape(headerValue(header, "shape", name), name);
  uint64_t nbytes = dtypeSize(*dtype);
  // In int64, as Tensor counts its elements and bytes.
  for (int64_t d : shape)
    if (__builtin_mul_overflow(nbytes, static_cast<uint64_t>(d), &nbytes) ||
        nbytes > static_cast<uint64_t>(INT64_MAX))
      invalid(name, "its shape " + describe(*dtype, shape) +
                        " is too large: its size in bytes does not fit in "
                        "int64");
  std::optional<uint64_t> remaining = remainingBytes(in);
  if (remaining && *remaining < nbytes)
    throw Error("'" + name + "' is truncated: " + describe(*dtype, shape) +
                " needs " + std::to_string(nbytes) +
                " bytes of data, the file has " + std::to_string(*remaining));
  Tensor tensor = Tensor::zeros(shape, *dtype);
  in.read(static_cast<char *>(tensor.mutable_data()),
          static_cast<std::streamsize>(tensor.nbytes()));
  if (static_cast<std::size_t>(in.gcount()) != tensor.nbytes())
    throw Error("'" + name + "' is truncated: " + tensor.describe() +
                " needs " + std::to_string(tensor.nbytes()) + " bytes of data");
  return tensor;
}

Tensor read_npy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error("cannot open '" + path + "': " + std::strerror(errno));
  return read_npy(in, path);
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
