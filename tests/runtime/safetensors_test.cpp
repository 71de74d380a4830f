// safetensors_test.cpp - the safetensors reader on valid and malformed
// files: every malformed one is a modelc::Error naming the file and what is
// wrong, never another exception or a crash (issue 15).
#include "safetensors.hpp"

#include "modelc/runtime.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>

using modelc::DType;

namespace {

/// A safetensors image: the 8-byte little-endian header length, the header,
/// the data.
std::string image(const std::string &header, const std::string &data = "") {
  std::string bytes(8, '\0');
  uint64_t size = header.size();
  for (int i = 0; i < 8; ++i)
    bytes[i] = static_cast<char>((size >> (8 * i)) & 0xff);
  return bytes + header + data;
}

std::map<std::string, modelc::SafetensorsEntry>
parse(const std::string &bytes) {
  return modelc::parseSafetensors(
      "w.safetensors", reinterpret_cast<const unsigned char *>(bytes.data()),
      bytes.size());
}

/// Expects parsing `bytes` to throw modelc::Error containing `text` and the
/// file's name.
void expectError(const std::string &bytes, const std::string &text) {
  try {
    parse(bytes);
    ADD_FAILURE() << "expected an error containing: " << text;
  } catch (const modelc::Error &e) {
    std::string message = e.what();
    EXPECT_NE(message.find(text), std::string::npos)
        << "message: " << message << "\nexpected to contain: " << text;
    EXPECT_NE(message.find("'w.safetensors' is not a valid safetensors file"),
              std::string::npos)
        << "message: " << message;
  }
}

/// One f32 tensor `name` of shape [2] over the 8 data bytes.
std::string oneTensor(const std::string &name) {
  return "\"" + name +
         "\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}";
}

} // namespace

TEST(Safetensors, ReadsTensorsMetadataAndEscapes) {
  std::string header =
      "{\"__metadata__\":{\"format\":\"pt\",\"n\":[1,-2.5e3,true,null,{}]},"
      "\"a\\u00e9\\\"\\n\":{\"dtype\":\"F32\",\"shape\":[2],"
      "\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"I64\",\"shape\":[1,1],\"data_offsets\":[8,16],"
      "\"extra\":[[{\"x\":[]}]]},"
      "\"empty\":{\"dtype\":\"F16\",\"shape\":[0,3],\"data_offsets\":[8,8]}}";
  std::string bytes = image(header, std::string(16, '\x01'));
  auto tensors = parse(bytes);
  ASSERT_EQ(tensors.size(), 3u);
  const auto &a = tensors.at("a\xc3\xa9\"\n");
  EXPECT_EQ(a.dtype, DType::F32);
  EXPECT_EQ(a.shape, std::vector<int64_t>{2});
  EXPECT_EQ(a.nbytes, 8u);
  EXPECT_EQ(a.data, reinterpret_cast<const unsigned char *>(bytes.data()) + 8 +
                        header.size());
  EXPECT_EQ(tensors.at("b").data, a.data + 8);
  EXPECT_EQ(tensors.at("empty").nbytes, 0u);
}

TEST(Safetensors, SurrogatePairsDecodeToUtf8) {
  auto tensors = parse(
      image("{" + oneTensor("\\ud83d\\ude00") + "}", std::string(8, '\0')));
  EXPECT_EQ(tensors.count("\xf0\x9f\x98\x80"), 1u);
  expectError(image("{" + oneTensor("\\ud83d") + "}", std::string(8, '\0')),
              "a high surrogate without its pair");
  expectError(image("{" + oneTensor("\\ude00") + "}", std::string(8, '\0')),
              "a lone low surrogate");
}

TEST(Safetensors, BadEscapesAreErrors) {
  std::string data(8, '\0');
  expectError(image("{" + oneTensor("a\\uZZZZ") + "}", data),
              "bad \\u escape in a string: 'Z' is not a hex digit");
  expectError(image("{" + oneTensor("a\\u12") + "}", data), "escape");
  expectError(image("{\"a\\u12"), "truncated \\u escape");
  expectError(image("{" + oneTensor("a\\q") + "}", data),
              "unknown escape '\\q'");
}

TEST(Safetensors, IntegersBeyondInt64AreErrors) {
  std::string data(8, '\0');
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[99999999999999999999]"
                    ",\"data_offsets\":[0,8]}}",
                    data),
              "the integer 99999999999999999999 in the header does not fit "
              "in 64 bits");
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                    "\"data_offsets\":[0,9223372036854775808]}}",
                    data),
              "does not fit in 64 bits");
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[-9223372036854775808]"
                    ",\"data_offsets\":[0,8]}}",
                    data),
              "has a negative dimension");
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[2],"
                    "\"data_offsets\":[-1,8]}}",
                    data),
              "has data_offsets [-1, 8] outside the 8 data bytes");
}

TEST(Safetensors, ShapeSizeOverflowIsAnError) {
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[4294967296,"
                    "4294967296],\"data_offsets\":[0,0]}}"),
              "tensor 'a' has shape f32[4294967296,4294967296], whose size "
              "in bytes does not fit in 64 bits");
  // The element count fits, its size in bytes does not.
  expectError(image("{\"a\":{\"dtype\":\"I64\",\"shape\":[2305843009213693952"
                    "],\"data_offsets\":[0,0]}}"),
              "does not fit in 64 bits");
}

TEST(Safetensors, DeepMetadataNeitherRecursesNorCrashes) {
  // A million levels: the skipper keeps its own stack, so this parses.
  const std::size_t depth = 1000000;
  std::string deep = std::string(depth, '[') + std::string(depth, ']');
  auto tensors =
      parse(image("{\"__metadata__\":" + deep + "," + oneTensor("a") + "}",
                  std::string(8, '\0')));
  EXPECT_EQ(tensors.size(), 1u);
  std::string objects;
  for (std::size_t i = 0; i < depth; ++i)
    objects += "{\"k\":";
  objects += "1" + std::string(depth, '}');
  EXPECT_TRUE(parse(image("{\"__metadata__\":" + objects + "}")).empty());
  // Unclosed, it is a clear error.
  expectError(image("{\"__metadata__\":" + std::string(depth, '[')),
              "truncated header");
  expectError(image("{\"__metadata__\":" + std::string(depth, '[') + "}"),
              "unexpected '}' in the header");
}

TEST(Safetensors, OverlappingDataIsAnError) {
  std::string header =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[4,12]}}";
  expectError(image(header, std::string(12, '\0')),
              "the data of tensors 'a' [0, 8) and 'b' [4, 12) overlap");
  std::string same =
      "{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
      "\"b\":{\"dtype\":\"I32\",\"shape\":[2],\"data_offsets\":[0,8]}}";
  expectError(image(same, std::string(8, '\0')), "overlap");
}

TEST(Safetensors, DuplicateKeysAreErrors) {
  std::string data(16, '\0');
  expectError(image("{" + oneTensor("a") + "," + oneTensor("a") + "}", data),
              "the header has tensor 'a' twice");
  expectError(image("{\"__metadata__\":{},\"__metadata__\":{}}"),
              "the header has '__metadata__' twice");
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"dtype\":\"F32\","
                    "\"shape\":[2],\"data_offsets\":[0,8]}}",
                    data),
              "tensor 'a' has 'dtype' twice");
}

TEST(Safetensors, MalformedHeadersAreErrors) {
  expectError("abc", "fewer than the 8-byte header length");
  expectError(image("{}").substr(0, 9), "the header claims 2 bytes");
  expectError(image("{\"a\":"), "expected '{' in the header");
  expectError(image("{\"__metadata__\":"), "truncated header");
  expectError(image("{\"a\":{\"dtype\":\"F32\"}}"),
              "tensor 'a' lacks dtype, shape or data_offsets");
  expectError(image("{\"__metadata__\":}"), "unexpected '}'");
  expectError(image("{\"a\":{\"dtype\":\"F8_E4M3\"}}"),
              "tensor 'a' has dtype F8_E4M3, which modelc does not support");
  expectError(image("{\"a\":{\"dtype\":\"F32\",\"shape\":[3],"
                    "\"data_offsets\":[0,8]}}",
                    std::string(8, '\0')),
              "tensor 'a' has 8 data bytes, its shape and dtype need 12");
}

TEST(Safetensors, FileErrorsNameThePath) {
  std::string path = ::testing::TempDir() + "/escape.safetensors";
  std::ofstream(path, std::ios::binary)
      << image("{" + oneTensor("\\uZZZZ") + "}", std::string(8, '\0'));
  try {
    modelc::SafetensorsFile file(path);
    ADD_FAILURE() << "expected an error";
  } catch (const modelc::Error &e) {
    EXPECT_NE(std::string(e.what()).find("'" + path +
                                         "' is not a valid safetensors file: "
                                         "bad \\u escape"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(path, std::ios::binary)
      << image("{" + oneTensor("x") + "}", std::string(8, '\0'));
  modelc::SafetensorsFile file(path);
  EXPECT_EQ(file.tensors().at("x").nbytes, 8u);
}
