// npy_test.cpp - the .npy reader and writer: round trips, and malformed
// files, each a modelc::Error naming the file and what is wrong, never
// another exception, a crash or a huge allocation (issue 15).
#include "modelc/npy.hpp"
#include "modelc/runtime.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using modelc::DType;
using modelc::Tensor;

namespace {

/// A .npy image: magic, version `major`.0, the header length (2 bytes for
/// version 1, else 4), the header (as given: no padding), the data.
std::string npyImage(const std::string &header, const std::string &data = "",
                     int major = 1) {
  std::string bytes = std::string("\x93NUMPY", 6) + static_cast<char>(major) +
                      std::string(1, '\0');
  uint32_t length = static_cast<uint32_t>(header.size());
  for (int i = 0; i < (major == 1 ? 2 : 4); ++i)
    bytes.push_back(static_cast<char>((length >> (8 * i)) & 0xff));
  return bytes + header + data;
}

std::string dict(const std::string &descr, const std::string &shape) {
  return "{'descr': " + descr + ", 'fortran_order': False, 'shape': " + shape +
         ", }\n";
}

/// Expects reading `bytes` (from memory, and from a file) to throw
/// modelc::Error containing `text` and the file's name.
void expectError(const std::string &bytes, const std::string &text) {
  std::string path = ::testing::TempDir() + "/malformed.npy";
  std::ofstream(path, std::ios::binary) << bytes;
  for (bool fromFile : {false, true}) {
    std::string name = fromFile ? path : "mem.npy";
    try {
      if (fromFile) {
        modelc::read_npy(path);
      } else {
        std::istringstream in(bytes);
        modelc::read_npy(in, name);
      }
      ADD_FAILURE() << "expected an error containing: " << text;
    } catch (const modelc::Error &e) {
      std::string message = e.what();
      EXPECT_NE(message.find(text), std::string::npos)
          << "message: " << message << "\nexpected to contain: " << text;
      EXPECT_NE(message.find("'" + name + "'"), std::string::npos)
          << "message: " << message;
    }
  }
}

} // namespace

TEST(Npy, RoundTripsEveryNumpyDType) {
  std::string path = ::testing::TempDir() + "/roundtrip.npy";
  for (DType dtype : {DType::F32, DType::F16, DType::I32, DType::I64,
                      DType::Bool, DType::I8, DType::I16, DType::U8, DType::U16,
                      DType::U32, DType::U64, DType::F64}) {
    Tensor t = Tensor::zeros({2, 3}, dtype);
    auto *bytes = static_cast<unsigned char *>(t.mutable_data());
    for (size_t i = 0; i < t.nbytes(); ++i)
      bytes[i] = static_cast<unsigned char>(dtype == DType::Bool ? i % 2 : i);
    modelc::write_npy(path, t);
    Tensor back = modelc::read_npy(path);
    EXPECT_EQ(back.dtype(), dtype);
    EXPECT_EQ(back.shape(), t.shape());
    EXPECT_EQ(std::memcmp(back.data(), t.data(), t.nbytes()), 0);
  }
  Tensor scalar = Tensor::zeros({}, DType::F32);
  modelc::write_npy(path, scalar);
  EXPECT_EQ(modelc::read_npy(path).shape(), std::vector<int64_t>{});
}

TEST(Npy, BadFilesAreErrors) {
  std::string path = ::testing::TempDir() + "/bad.npy";
  std::ofstream(path) << "hello";
  EXPECT_THROW(modelc::read_npy(path), modelc::Error);
  EXPECT_THROW(modelc::read_npy(path + ".missing"), modelc::Error);
  Tensor bf = Tensor::zeros({2}, DType::BF16);
  EXPECT_THROW(modelc::write_npy(path, bf), modelc::Error);
}

TEST(Npy, ReadsFromMemory) {
  std::istringstream in(
      npyImage(dict("'<i4'", "(2,)"), std::string("\x01\0\0\0\x02\0\0\0", 8)));
  Tensor t = modelc::read_npy(in, "x");
  EXPECT_EQ(t.shape(), std::vector<int64_t>{2});
  EXPECT_EQ(t.data_as<int32_t>()[1], 2);
  std::istringstream scalar(
      npyImage(dict("'<f4'", "( )"), std::string(4, '\0'), 3));
  EXPECT_EQ(modelc::read_npy(scalar, "s").shape(), std::vector<int64_t>{});
}

TEST(Npy, EmptyOrMissingDescrIsAnError) {
  expectError(npyImage(dict("''", "(2,)"), std::string(8, '\0')),
              "has dtype ''; supported");
  expectError(npyImage("{'descr': , 'fortran_order': False, 'shape': (2,)}"),
              "the value of 'descr' in the header is empty");
  expectError(npyImage("{'descr': x, 'fortran_order': False, 'shape': (2,)}"),
              "its descr x is not a quoted string");
  expectError(npyImage("{'descr':"), "no value for 'descr'");
  expectError(npyImage("{'descr'"), "no ':' after 'descr'");
  expectError(npyImage("{'descr': '<f4"),
              "the value of 'descr' in the header is not closed");
  expectError(npyImage("{'fortran_order': False}"), "the header lacks 'descr'");
}

TEST(Npy, ShapeWithTextOrBeyondInt64IsAnError) {
  expectError(npyImage(dict("'<f4'", "(2, x)")),
              "its shape (2, x) has 'x', which is not a dimension");
  expectError(npyImage(dict("'<f4'", "(99999999999999999999,)")),
              "has '99999999999999999999', which is not a dimension");
  expectError(npyImage(dict("'<f4'", "(-1,)")), "has '-1', which is not");
  expectError(npyImage(dict("'<f4'", "(2,,3)")), "has an empty dimension");
  expectError(npyImage(dict("'<f4'", "[2]")), "its shape [2] is not a tuple");
  expectError(npyImage(dict("'<f4'", "(2")), "'shape' in the header is not "
                                             "closed");
}

TEST(Npy, ShapeSizeOverflowIsAnError) {
  expectError(npyImage(dict("'<f4'", "(4294967296, 4294967296)")),
              "its shape f32[4294967296,4294967296] is too large: its size "
              "in bytes does not fit in int64");
  expectError(npyImage(dict("'<i8'", "(2305843009213693952,)")),
              "does not fit in int64");
  // The byte size fits in 64 bits unsigned, not in int64.
  expectError(npyImage(dict("'|b1'", "(4611686018427387904, 3)")),
              "does not fit in int64");
}

TEST(Npy, SizesAreCheckedBeforeAllocating) {
  // A version 2 header claiming 4 GiB: an error before any allocation.
  std::string huge = npyImage("{}", "", 2);
  for (int i = 8; i < 12; ++i)
    huge[i] = '\xff';
  expectError(huge, "is truncated (in its header): the header claims "
                    "4294967295 bytes, the file has 2 after the length");
  // A shape of 2^40 floats over 8 bytes of data: no 4 TiB tensor either.
  expectError(npyImage(dict("'<f4'", "(1099511627776,)"), std::string(8, '\0')),
              "is truncated: f32[1099511627776] needs 4398046511104 bytes of "
              "data, the file has 8");
  expectError(npyImage(dict("'<f4'", "(3,)"), std::string(8, '\0')),
              "needs 12 bytes of data, the file has 8");
}

TEST(Npy, VersionsAndShortHeadersAreChecked) {
  expectError(npyImage(dict("'<f4'", "(2,)"), std::string(8, '\0'), 4),
              "is .npy format version 4.0; supported: 1.0 to 3.0");
  expectError(npyImage(dict("'<f4'", "(2,)"), std::string(8, '\0'), 0),
              "is .npy format version 0.0");
  expectError(std::string("\x93NUMPY\x02\x00\x10", 9),
              "is truncated (in its header)");
  expectError(npyImage("{'descr': '<f4', 'fortran_order': True, "
                       "'shape': (2,)}"),
              "is in Fortran order");
}
