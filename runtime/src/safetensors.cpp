// safetensors.cpp - a strict reader of the safetensors format: an 8-byte
// little-endian header length, a JSON header mapping names to
// {dtype, shape, data_offsets}, then the data.
#include "safetensors.hpp"

#include "modelc/runtime.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace modelc {
namespace {

/// A small JSON reader for the safetensors header: objects, arrays, strings,
/// integers (and skipping of other values inside __metadata__).
class HeaderParser {
public:
  HeaderParser(const std::string &path, const char *text, std::size_t size)
      : path_(path), p_(text), end_(text + size) {}

  [[noreturn]] void fail(const std::string &what) const {
    throw Error("'" + path_ + "' is not a valid safetensors file: " + what);
  }

  void skipSpace() {
    while (p_ < end_ &&
           (*p_ == ' ' || *p_ == '\n' || *p_ == '\t' || *p_ == '\r'))
      ++p_;
  }
  bool consume(char c) {
    skipSpace();
    if (p_ < end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!consume(c))
      fail(std::string("expected '") + c + "' in the header");
  }
  std::string string() {
    skipSpace();
    if (p_ >= end_ || *p_ != '"')
      fail("expected a string in the header");
    ++p_;
    std::string out;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\') {
        if (++p_ >= end_)
          break;
        char c = *p_;
        if (c == 'u') {
          // Names are ASCII in practice; keep \uXXXX as a code point < 128.
          if (end_ - p_ < 5)
            fail("truncated escape in the header");
          unsigned code = std::stoul(std::string(p_ + 1, p_ + 5), nullptr, 16);
          out.push_back(static_cast<char>(code < 128 ? code : '?'));
          p_ += 4;
        } else {
          out.push_back(c == 'n' ? '\n' : c == 't' ? '\t' : c);
        }
      } else {
        out.push_back(*p_);
      }
      ++p_;
    }
    if (p_ >= end_)
      fail("unterminated string in the header");
    ++p_;
    return out;
  }
  int64_t integer() {
    skipSpace();
    const char *start = p_;
    if (p_ < end_ && *p_ == '-')
      ++p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9')
      ++p_;
    if (p_ == start)
      fail("expected an integer in the header");
    return std::stoll(std::string(start, p_));
  }
  void skipValue() {
    skipSpace();
    if (p_ >= end_)
      fail("truncated header");
    if (*p_ == '"') {
      string();
    } else if (*p_ == '{' || *p_ == '[') {
      char close = *p_ == '{' ? '}' : ']';
      ++p_;
      if (consume(close))
        return;
      do {
        if (close == '}') {
          string();
          expect(':');
        }
        skipValue();
      } while (consume(','));
      expect(close);
    } else {
      while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']')
        ++p_;
    }
  }
  bool atEnd() {
    skipSpace();
    return p_ >= end_;
  }

private:
  std::string path_;
  const char *p_;
  const char *end_;
};

std::optional<DType> parseSafetensorsDType(const std::string &name) {
  if (name == "F32")
    return DType::F32;
  if (name == "F16")
    return DType::F16;
  if (name == "BF16")
    return DType::BF16;
  if (name == "I32")
    return DType::I32;
  if (name == "I64")
    return DType::I64;
  if (name == "BOOL")
    return DType::Bool;
  return std::nullopt;
}

} // namespace

const char *safetensorsDTypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "F32";
  case DType::F16:
    return "F16";
  case DType::BF16:
    return "BF16";
  case DType::I32:
    return "I32";
  case DType::I64:
    return "I64";
  case DType::Bool:
    return "BOOL";
  }
  return "?";
}

SafetensorsFile::SafetensorsFile(const std::string &path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw Error("cannot open weights '" + path + "': " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    throw Error("cannot read weights '" + path + "': " + std::strerror(err));
  }
  size_ = static_cast<std::size_t>(st.st_size);
  if (size_ < 8) {
    ::close(fd);
    throw Error("'" + path + "' is not a valid safetensors file: it has " +
                std::to_string(size_) +
                " bytes, fewer than the 8-byte "
                "header length");
  }
  mapping_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw Error("cannot map weights '" + path + "': " + std::strerror(errno));
  }
  const unsigned char *bytes = static_cast<const unsigned char *>(mapping_);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  try {
    if (headerSize > size_ - 8)
      throw Error("'" + path +
                  "' is not a valid safetensors file: the "
                  "header claims " +
                  std::to_string(headerSize) + " bytes, the file has " +
                  std::to_string(size_ - 8) + " after the length (truncated?)");
    const unsigned char *data = bytes + 8 + headerSize;
    uint64_t dataSize = size_ - 8 - headerSize;
    HeaderParser parser(path, reinterpret_cast<const char *>(bytes + 8),
                        headerSize);
    parser.expect('{');
    if (!parser.consume('}')) {
      do {
        std::string name = parser.string();
        parser.expect(':');
        if (name == "__metadata__") {
          parser.skipValue();
          continue;
        }
        std::optional<DType> dtype;
        std::vector<int64_t> shape;
        int64_t begin = -1, end = -1;
        bool hasShape = false;
        parser.expect('{');
        do {
          std::string key = parser.string();
          parser.expect(':');
          if (key == "dtype") {
            std::string dtypeName = parser.string();
            dtype = parseSafetensorsDType(dtypeName);
            if (!dtype)
              parser.fail("tensor '" + name + "' has dtype " + dtypeName +
                          ", which modelc does not support");
          } else if (key == "shape") {
            hasShape = true;
            parser.expect('[');
            if (!parser.consume(']')) {
              do
                shape.push_back(parser.integer());
              while (parser.consume(','));
              parser.expect(']');
            }
          } else if (key == "data_offsets") {
            parser.expect('[');
            begin = parser.integer();
            parser.expect(',');
            end = parser.integer();
            parser.expect(']');
          } else {
            parser.skipValue();
          }
        } while (parser.consume(','));
        parser.expect('}');
        if (!dtype || !hasShape || begin < 0)
          parser.fail("tensor '" + name +
                      "' lacks dtype, shape or data_offsets");
        int64_t numel = 1;
        for (int64_t d : shape) {
          if (d < 0)
            parser.fail("tensor '" + name + "' has a negative dimension");
          numel *= d;
        }
        uint64_t expected = static_cast<uint64_t>(numel) * dtypeSize(*dtype);
        if (end < begin || static_cast<uint64_t>(end) > dataSize)
          parser.fail("tensor '" + name + "' has data_offsets [" +
                      std::to_string(begin) + ", " + std::to_string(end) +
                      "] outside the " + std::to_string(dataSize) +
                      " data bytes (truncated?)");
        if (static_cast<uint64_t>(end - begin) != expected)
          parser.fail("tensor '" + name + "' has " +
                      std::to_string(end - begin) +
                      " data bytes, its shape "
                      "and dtype need " +
                      std::to_string(expected));
        tensors_[name] = SafetensorsEntry{*dtype, shape, data + begin,
                                          static_cast<uint64_t>(end - begin)};
      } while (parser.consume(','));
      parser.expect('}');
    }
  } catch (...) {
    ::munmap(mapping_, size_);
    mapping_ = nullptr;
    throw;
  }
}

SafetensorsFile::~SafetensorsFile() {
  if (mapping_)
    ::munmap(mapping_, size_);
}

} // namespace modelc
