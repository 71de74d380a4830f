// safetensors.cpp - a strict reader of the safetensors format: an 8-byte
// little-endian header length, a JSON header mapping names to
// {dtype, shape, data_offsets}, then the data.
#include "safetensors.hpp"

#include "modelc/runtime.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace modelc {
namespace {

/// A small JSON reader for the safetensors header: objects, arrays, strings,
/// integers (and skipping of other values inside __metadata__). Every
/// malformed input is an Error; nothing recurses.
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
      if (*p_ != '\\') {
        out.push_back(*p_++);
        continue;
      }
      if (++p_ >= end_)
        break;
      char c = *p_++;
      switch (c) {
      case '"':
      case '\\':
      case '/':
        out.push_back(c);
        break;
      case 'b':
        out.push_back('\b');
        break;
      case 'f':
        out.push_back('\f');
        break;
      case 'n':
        out.push_back('\n');
        break;
      case 'r':
        out.push_back('\r');
        break;
      case 't':
        out.push_back('\t');
        break;
      case 'u':
        appendUtf8(out, codePoint());
        break;
      default:
        fail(std::string("unknown escape '\\") + c + "' in a string");
      }
    }
    if (p_ >= end_)
      fail("unterminated string in the header");
    ++p_;
    return out;
  }
  /// A decimal integer that fits int64 (a sign, then digits).
  int64_t integer() {
    skipSpace();
    const char *start = p_;
    bool negative = p_ < end_ && *p_ == '-';
    if (negative)
      ++p_;
    uint64_t value = 0;
    // The magnitude of INT64_MIN is one more than INT64_MAX.
    uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0);
    const char *digits = p_;
    for (; p_ < end_ && *p_ >= '0' && *p_ <= '9'; ++p_) {
      unsigned digit = static_cast<unsigned>(*p_ - '0');
      if (value > (limit - digit) / 10)
        fail("the integer " + std::string(start, numberEnd(p_)) +
             " in the header does not fit in 64 bits");
      value = value * 10 + digit;
    }
    if (p_ == digits)
      fail("expected an integer in the header");
    if (negative)
      return value == limit ? INT64_MIN : -static_cast<int64_t>(value);
    return static_cast<int64_t>(value);
  }
  /// Skips one JSON value of any kind and nesting, with an explicit stack
  /// of the open containers' closing characters.
  void skipValue() {
    std::vector<char> open;
    for (;;) {
      skipSpace();
      if (p_ >= end_)
        fail("truncated header");
      char c = *p_;
      if (c == '{' || c == '[') {
        ++p_;
        char close = c == '{' ? '}' : ']';
        if (!consume(close)) {
          open.push_back(close);
          if (close == '}') {
            string();
            expect(':');
          }
          continue;
        }
      } else if (c == '"') {
        string();
      } else {
        skipScalar();
      }
      // A value ended: the next member, or close containers.
      for (;;) {
        if (open.empty())
          return;
        if (consume(',')) {
          if (open.back() == '}') {
            string();
            expect(':');
          }
          break;
        }
        expect(open.back());
        open.pop_back();
      }
    }
  }
  bool atEnd() {
    skipSpace();
    return p_ >= end_;
  }

private:
  /// A number, true, false or null: their characters, at least one.
  void skipScalar() {
    const char *start = p_;
    while (p_ < end_ && (std::isalnum(static_cast<unsigned char>(*p_)) ||
                         *p_ == '-' || *p_ == '+' || *p_ == '.'))
      ++p_;
    if (p_ == start)
      fail(std::string("unexpected '") + *p_ + "' in the header");
  }
  const char *numberEnd(const char *p) const {
    while (p < end_ && *p >= '0' && *p <= '9')
      ++p;
    return p;
  }
  /// The 4 hex digits after "\u", read.
  unsigned hex4() {
    if (end_ - p_ < 4)
      fail("truncated \\u escape in a string");
    unsigned code = 0;
    for (int i = 0; i < 4; ++i, ++p_) {
      char c = *p_;
      unsigned digit = c >= '0' && c <= '9'   ? c - '0'
                       : c >= 'a' && c <= 'f' ? c - 'a' + 10
                       : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                              : 16;
      if (digit == 16)
        fail("bad \\u escape in a string: '" + std::string(1, c) +
             "' is not a hex digit");
      code = code * 16 + digit;
    }
    return code;
  }
  /// The code point of a \u escape (a surrogate pair as one).
  unsigned codePoint() {
    unsigned code = hex4();
    if (code >= 0xDC00 && code <= 0xDFFF)
      fail("bad \\u escape in a string: a lone low surrogate");
    if (code >= 0xD800 && code <= 0xDBFF) {
      if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
        fail("bad \\u escape in a string: a high surrogate without its pair");
      p_ += 2;
      unsigned low = hex4();
      if (low < 0xDC00 || low > 0xDFFF)
        fail("bad \\u escape in a string: a high surrogate without its pair");
      code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
    }
    return code;
  }
  static void appendUtf8(std::string &out, unsigned code) {
    if (code < 0x80) {
      out.push_back(static_cast<char>(code));
    } else if (code < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (code >> 6)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else if (code < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (code >> 12)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    } else {
      out.push_back(static_cast<char>(0xF0 | (code >> 18)));
      out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
    }
  }

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
  if (name == "I8")
    return DType::I8;
  if (name == "I16")
    return DType::I16;
  if (name == "U8")
    return DType::U8;
  if (name == "U16")
    return DType::U16;
  if (name == "U32")
    return DType::U32;
  if (name == "U64")
    return DType::U64;
  if (name == "F64")
    return DType::F64;
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
  case DType::I8:
    return "I8";
  case DType::I16:
    return "I16";
  case DType::U8:
    return "U8";
  case DType::U16:
    return "U16";
  case DType::U32:
    return "U32";
  case DType::U64:
    return "U64";
  case DType::F64:
    return "F64";
  }
  return "?";
}

namespace {

/// "has N bytes, fewer than the 8-byte header length"
Error tooShort(const std::string &path, std::size_t size) {
  return Error("'" + path + "' is not a valid safetensors file: it has " +
               std::to_string(size) +
               " bytes, fewer than the 8-byte header length");
}

/// One tensor's header entry, its data offsets not yet resolved.
struct HeaderEntry {
  DType dtype;
  std::vector<int64_t> shape;
  int64_t begin, end;
};

/// The object after a tensor's name: dtype, shape and data_offsets (each
/// once), checked against each other and against `dataSize`.
HeaderEntry parseEntry(HeaderParser &parser, const std::string &name,
                       uint64_t dataSize) {
  std::optional<DType> dtype;
  std::vector<int64_t> shape;
  int64_t begin = -1, end = -1;
  bool hasShape = false, hasOffsets = false;
  auto once = [&](bool seen, const std::string &key) {
    if (seen)
      parser.fail("tensor '" + name + "' has '" + key + "' twice");
  };
  parser.expect('{');
  do {
    std::string key = parser.string();
    parser.expect(':');
    if (key == "dtype") {
      once(dtype.has_value(), key);
      std::string dtypeName = parser.string();
      dtype = parseSafetensorsDType(dtypeName);
      if (!dtype)
        parser.fail("tensor '" + name + "' has dtype " + dtypeName +
                    ", which modelc does not support");
    } else if (key == "shape") {
      once(hasShape, key);
      hasShape = true;
      parser.expect('[');
      if (!parser.consume(']')) {
        do
          shape.push_back(parser.integer());
        while (parser.consume(','));
        parser.expect(']');
      }
    } else if (key == "data_offsets") {
      once(hasOffsets, key);
      hasOffsets = true;
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
  if (!dtype || !hasShape || !hasOffsets)
    parser.fail("tensor '" + name + "' lacks dtype, shape or data_offsets");
  // The byte size, in 64 bits without overflow.
  uint64_t expected = dtypeSize(*dtype);
  for (int64_t d : shape) {
    if (d < 0)
      parser.fail("tensor '" + name + "' has a negative dimension");
    if (__builtin_mul_overflow(expected, static_cast<uint64_t>(d), &expected))
      parser.fail("tensor '" + name + "' has shape " + describe(*dtype, shape) +
                  ", whose size in bytes does not fit in 64 bits");
  }
  if (begin < 0 || end < begin || static_cast<uint64_t>(end) > dataSize)
    parser.fail("tensor '" + name + "' has data_offsets [" +
                std::to_string(begin) + ", " + std::to_string(end) +
                "] outside the " + std::to_string(dataSize) +
                " data bytes (truncated?)");
  if (static_cast<uint64_t>(end - begin) != expected)
    parser.fail("tensor '" + name + "' has " + std::to_string(end - begin) +
                " data bytes, its shape and dtype need " +
                std::to_string(expected));
  return HeaderEntry{*dtype, std::move(shape), begin, end};
}

/// Two tensors whose data overlap are an error (empty ones overlap nothing).
void checkOverlaps(HeaderParser &parser,
                   const std::map<std::string, HeaderEntry> &entries) {
  std::vector<std::pair<const std::string *, const HeaderEntry *>> sorted;
  for (const auto &[name, entry] : entries)
    if (entry.end > entry.begin)
      sorted.push_back({&name, &entry});
  std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) {
    return a.second->begin < b.second->begin;
  });
  for (std::size_t i = 1; i < sorted.size(); ++i) {
    const HeaderEntry &prev = *sorted[i - 1].second, &next = *sorted[i].second;
    if (next.begin < prev.end)
      parser.fail("the data of tensors '" + *sorted[i - 1].first + "' [" +
                  std::to_string(prev.begin) + ", " + std::to_string(prev.end) +
                  ") and '" + *sorted[i].first + "' [" +
                  std::to_string(next.begin) + ", " + std::to_string(next.end) +
                  ") overlap");
  }
}

} // namespace

std::map<std::string, SafetensorsEntry>
parseSafetensors(const std::string &path, const unsigned char *bytes,
                 std::size_t size) {
  if (size < 8)
    throw tooShort(path, size);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > size - 8)
    throw Error("'" + path +
                "' is not a valid safetensors file: the header claims " +
                std::to_string(headerSize) + " bytes, the file has " +
                std::to_string(size - 8) + " after the length (truncated?)");
  const unsigned char *data = bytes + 8 + headerSize;
  uint64_t dataSize = size - 8 - headerSize;
  HeaderParser parser(path, reinterpret_cast<const char *>(bytes + 8),
                      headerSize);
  std::map<std::string, HeaderEntry> entries;
  bool hasMetadata = false;
  parser.expect('{');
  if (!parser.consume('}')) {
    do {
      std::string name = parser.string();
      parser.expect(':');
      if (name == "__metadata__") {
        if (hasMetadata)
          parser.fail("the header has '__metadata__' twice");
        hasMetadata = true;
        parser.skipValue();
        continue;
      }
      if (entries.count(name))
        parser.fail("the header has tensor '" + name + "' twice");
      entries.emplace(name, parseEntry(parser, name, dataSize));
    } while (parser.consume(','));
    parser.expect('}');
  }
  checkOverlaps(parser, entries);
  std::map<std::string, SafetensorsEntry> tensors;
  for (auto &[name, entry] : entries)
    tensors.emplace(
        name, SafetensorsEntry{entry.dtype, std::move(entry.shape),
                               data + entry.begin,
                               static_cast<uint64_t>(entry.end - entry.begin)});
  return tensors;
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
    throw tooShort(path, size_);
  }
  mapping_ = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
  int mapError = errno;
  ::close(fd);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    throw Error("cannot map weights '" + path +
                "': " + std::strerror(mapError));
  }
  try {
    tensors_ = parseSafetensors(
        path, static_cast<const unsigned char *>(mapping_), size_);
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
