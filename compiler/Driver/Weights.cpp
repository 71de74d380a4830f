//===- Weights.cpp - the weights a model is compiled with -----------------===//

#include "compiler/Driver/Weights.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "runtime/include/modelc/half.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace modelc;
using modelc::graph::elementBytes;
using modelc::graph::valueBytes;

namespace {

/// Opens `path` for writing; an error names the file.
std::unique_ptr<llvm::raw_fd_ostream> openOutput(StringRef path) {
  std::error_code ec;
  auto os =
      std::make_unique<llvm::raw_fd_ostream>(path, ec, llvm::sys::fs::OF_None);
  if (!ec)
    return os;
  llvm::errs() << "modelc: error: cannot write '" << path
               << "': " << ec.message() << "\n";
  return nullptr;
}

/// Closes `os`; a write error (a full disk, say) names the file.
LogicalResult closeOutput(llvm::raw_fd_ostream &os, StringRef path) {
  os.close();
  if (!os.has_error())
    return success();
  llvm::errs() << "modelc: error: cannot write '" << path
               << "': " << os.error().message() << "\n";
  os.clear_error();
  return failure();
}

const char *safetensorsName(Type type) {
  if (type.isF32())
    return "F32";
  if (type.isF16())
    return "F16";
  if (type.isBF16())
    return "BF16";
  if (type.isSignlessInteger(32))
    return "I32";
  if (type.isF64())
    return "F64";
  if (type.isSignlessInteger(1))
    return "BOOL";
  auto integer = cast<IntegerType>(type);
  static const char *const names[2][4] = {{"I8", "I16", "I32", "I64"},
                                          {"U8", "U16", "U32", "U64"}};
  unsigned width = integer.getWidth();
  unsigned column = width == 8 ? 0 : width == 16 ? 1 : width == 32 ? 2 : 3;
  return names[integer.isUnsigned() ? 1 : 0][column];
}

std::string describeType(RankedTensorType type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type.getElementType() << "[";
  llvm::interleaveComma(type.getShape(), os);
  os << "]";
  return text;
}

uint64_t bytesOf(RankedTensorType type) {
  return static_cast<uint64_t>(type.getNumElements()) *
         elementBytes(type.getElementType());
}

/// splitmix64: small, fast, and the same on every platform.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
};

uint64_t hashName(llvm::StringRef name) {
  uint64_t h = 1469598103934665603ULL; // FNV-1a
  for (char c : name)
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  return h;
}

} // namespace

static SmallVector<graph::WeightOp> declarations(ModuleOp module) {
  return SmallVector<graph::WeightOp>(module.getOps<graph::WeightOp>());
}

WeightSet modelc::declaredWeights(ModuleOp module, bool sourceTypes) {
  WeightSet set;
  for (graph::WeightOp decl : declarations(module)) {
    RankedTensorType type =
        sourceTypes ? decl.getSourceTensorType() : decl.getTensorType();
    set.weights.push_back(
        {decl.getSymName().str(), type, nullptr, bytesOf(type)});
  }
  return set;
}

void modelc::roundToDeclared(WeightSet &set, ModuleOp module) {
  for (auto [decl, w] : llvm::zip(declarations(module), set.weights)) {
    RankedTensorType declared = decl.getTensorType();
    if (w.type == declared)
      continue;
    // modelc-lower-precision: f32 data for an f16 or bf16 declaration.
    bool bf16 = declared.getElementType().isBF16();
    std::vector<unsigned char> bytes(bytesOf(declared));
    for (int64_t i = 0; i < declared.getNumElements(); ++i) {
      float f;
      std::memcpy(&f, w.data + 4 * i, 4);
      uint16_t h = bf16 ? modelc::float_to_bf16(f) : modelc::float_to_f16(f);
      std::memcpy(&bytes[2 * i], &h, 2);
    }
    set.storage.push_back(std::move(bytes));
    w = {w.name, declared, set.storage.back().data(), bytesOf(declared)};
  }
}

FailureOr<WeightSet> modelc::readSafetensorsWeights(ModuleOp module,
                                                    StringRef path) {
  Location fileLoc = FileLineColLoc::get(module.getContext(), path, 0, 0);
  auto fail = [&](const llvm::Twine &message) {
    emitError(fileLoc) << message;
    return failure();
  };
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail("cannot read weights '" + path +
                "': " + buffer.getError().message());
  StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() < 8)
    return fail("'" + path +
                "' is not a safetensors file: it is shorter "
                "than the 8-byte header length");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | static_cast<unsigned char>(bytes[i]);
  if (headerSize > bytes.size() - 8)
    return fail("'" + path + "' is not a safetensors file: its header claims " +
                llvm::Twine(headerSize) + " bytes, the file has " +
                llvm::Twine(bytes.size() - 8) + " (truncated?)");
  llvm::Expected<llvm::json::Value> header =
      llvm::json::parse(bytes.substr(8, headerSize));
  if (!header)
    return fail("'" + path + "' has a malformed header: " +
                llvm::toString(header.takeError()));
  const llvm::json::Object *object = header->getAsObject();
  if (!object)
    return fail("'" + path + "' has a malformed header: not a JSON object");
  const unsigned char *data =
      reinterpret_cast<const unsigned char *>(bytes.data()) + 8 + headerSize;
  uint64_t dataSize = bytes.size() - 8 - headerSize;

  WeightSet set;
  llvm::StringSet<> declared;
  for (graph::WeightOp decl : declarations(module)) {
    std::string name = decl.getSymName().str();
    declared.insert(name);
    // The file holds the weight as the model had it before
    // modelc-lower-precision, if that ran: f32.
    RankedTensorType type = decl.getSourceTensorType();
    const llvm::json::Object *entry = object->getObject(name);
    if (!entry && decl.getZeros()) {
      // Optimizer state the file does not hold yet: it starts as zeros.
      set.storage.emplace_back(bytesOf(type), 0);
      set.weights.push_back(
          {name, type, set.storage.back().data(), bytesOf(type)});
      continue;
    }
    if (!entry) {
      decl.emitError("weight '")
          << name << "' is missing from '" << path << "'";
      return failure();
    }
    std::optional<StringRef> dtype = entry->getString("dtype");
    const llvm::json::Array *shape = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!dtype || !shape || !offsets || offsets->size() != 2) {
      decl.emitError("weight '")
          << name << "' in '" << path << "' lacks dtype, shape or data_offsets";
      return failure();
    }
    SmallVector<int64_t> dims;
    for (const llvm::json::Value &d : *shape)
      dims.push_back(d.getAsInteger().value_or(-1));
    std::string found = dtype->str() + "[";
    for (auto [i, d] : llvm::enumerate(dims))
      found += (i ? "," : "") + std::to_string(d);
    found += "]";
    if (*dtype != safetensorsName(type.getElementType()) ||
        ArrayRef<int64_t>(dims) != type.getShape()) {
      InFlightDiagnostic diag = decl.emitError("weight '");
      diag << name << "' in '" << path << "' is " << found
           << "; the model declares " << describeType(type) << " ("
           << safetensorsName(type.getElementType()) << ")";
      if (decl.getSourceDtype())
        diag << ", which --precision rounds to "
             << decl.getTensorType().getElementType();
      return failure();
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > dataSize ||
        static_cast<uint64_t>(*end - *begin) != bytesOf(type)) {
      decl.emitError("weight '")
          << name << "' in '" << path << "' has data_offsets that do not "
          << "fit the file or its shape (truncated?)";
      return failure();
    }
    set.weights.push_back({name, type, data + *begin, bytesOf(type)});
  }
  for (const auto &entry : *object) {
    StringRef key = entry.first;
    if (key != "__metadata__" && !declared.contains(key))
      return fail("'" + path + "' has a tensor '" + key +
                  "' that the model does not declare (an extra weight)");
  }
  set.file = std::move(*buffer);
  roundToDeclared(set, module);
  return set;
}

namespace {

/// The random values of one weight: element i is the same whichever range
/// of elements is made, so a large weight is made in pieces.
struct RandomWeight {
  uint64_t state; ///< the generator's state before element 0
  double bound;   ///< values in +-bound, or in [0.5, 1.5] for a variance
  bool variance;
  Type element;

  /// Writes elements [begin, begin + count) to `out`.
  void fill(int64_t begin, int64_t count, unsigned char *out) const {
    // splitmix64 adds its constant once per value: element i starts there.
    SplitMix64 rng{state +
                   static_cast<uint64_t>(begin) * 0x9e3779b97f4a7c15ULL};
    unsigned bytes = elementBytes(element);
    for (int64_t i = 0; i < count; ++i, out += bytes) {
      double u = rng.uniform();
      double value = variance ? 0.5 + u : (2.0 * u - 1.0) * bound;
      if (element.isF32()) {
        float f = static_cast<float>(value);
        std::memcpy(out, &f, 4);
      } else if (element.isF16()) {
        uint16_t h = modelc::float_to_f16(static_cast<float>(value));
        std::memcpy(out, &h, 2);
      } else if (element.isBF16()) {
        uint16_t b = modelc::float_to_bf16(static_cast<float>(value));
        std::memcpy(out, &b, 2);
      } else if (element.isF64()) {
        std::memcpy(out, &value, 8);
      } else if (element.isSignlessInteger(1)) {
        *out = u < 0.5 ? 0 : 1;
      } else {
        // Integer weights (index tables): small non-negative values.
        int64_t v = static_cast<int64_t>(u * 16);
        std::memcpy(out, &v, bytes);
      }
    }
  }
};

/// How each declared weight's random values are made, in declaration order.
std::vector<RandomWeight> randomWeightsOf(ModuleOp module, uint64_t seed) {
  // Weights read as a batch_norm variance must be positive.
  llvm::StringSet<> variances;
  module.walk([&](graph::BatchNormOp norm) {
    if (auto ref = norm.getVariance().getDefiningOp<graph::WeightRefOp>())
      variances.insert(ref.getName());
  });
  std::vector<RandomWeight> result;
  for (graph::WeightOp decl : module.getOps<graph::WeightOp>()) {
    RankedTensorType type = decl.getTensorType();
    ArrayRef<int64_t> shape = type.getShape();
    int64_t fanIn = shape.size() >= 2
                        ? type.getNumElements() / shape[0]
                        : std::max<int64_t>(1, type.getNumElements());
    double bound =
        1.0 / std::sqrt(static_cast<double>(std::max<int64_t>(1, fanIn)));
    result.push_back({seed ^ hashName(decl.getSymName()), bound,
                      variances.contains(decl.getSymName()),
                      type.getElementType()});
  }
  return result;
}

/// The safetensors header of `weights` (their names, types and sizes),
/// its 8-byte length first, padded with spaces to 8 bytes.
std::string safetensorsHeader(const WeightSet &weights) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const WeightSet::Weight &w : weights.weights) {
    llvm::json::Array shape;
    for (int64_t d : w.type.getShape())
      shape.push_back(d);
    header[w.name] = llvm::json::Object{
        {"dtype", safetensorsName(w.type.getElementType())},
        {"shape", std::move(shape)},
        {"data_offsets", llvm::json::Array{offset, offset + w.nbytes}}};
    offset += w.nbytes;
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(header));
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string result;
  uint64_t size = text.size();
  for (int i = 0; i < 8; ++i)
    result.push_back(static_cast<char>((size >> (8 * i)) & 0xff));
  return result + text;
}

} // namespace

WeightSet modelc::randomWeights(ModuleOp module, uint64_t seed) {
  WeightSet set = declaredWeights(module);
  for (auto [w, random, decl] : llvm::zip(
           set.weights, randomWeightsOf(module, seed), declarations(module))) {
    std::vector<unsigned char> bytes(w.nbytes);
    if (!decl.getZeros()) // optimizer state starts as zeros
      random.fill(0, w.type.getNumElements(), bytes.data());
    set.storage.push_back(std::move(bytes));
    w.data = set.storage.back().data();
  }
  return set;
}

LogicalResult modelc::writeRandomSafetensors(ModuleOp module, uint64_t seed,
                                             StringRef path) {
  WeightSet declared = declaredWeights(module);
  std::unique_ptr<llvm::raw_fd_ostream> out = openOutput(path);
  if (!out)
    return failure();
  llvm::raw_fd_ostream &os = *out;
  os << safetensorsHeader(declared);
  // 64 MB at a time at most, whatever the weights' sizes.
  std::vector<unsigned char> piece;
  for (auto [w, random, decl] :
       llvm::zip(declared.weights, randomWeightsOf(module, seed),
                 declarations(module))) {
    int64_t elements = w.type.getNumElements();
    unsigned bytes = elementBytes(w.type.getElementType());
    int64_t step = std::max<int64_t>(1, (int64_t(64) << 20) / bytes);
    for (int64_t begin = 0; begin < elements && !os.has_error();
         begin += step) {
      int64_t count = std::min(step, elements - begin);
      piece.assign(static_cast<size_t>(count) * bytes, 0);
      if (!decl.getZeros()) // optimizer state starts as zeros
        random.fill(begin, count, piece.data());
      os.write(reinterpret_cast<const char *>(piece.data()), piece.size());
    }
  }
  return closeOutput(os, path);
}

FailureOr<std::vector<WeightSlot>>
modelc::writeWeightBlob(const WeightSet &weights, StringRef path,
                        uint64_t &totalBytes,
                        const llvm::StringSet<> &writable) {
  std::unique_ptr<llvm::raw_fd_ostream> out = openOutput(path);
  if (!out)
    return failure();
  llvm::raw_fd_ostream &os = *out;
  std::vector<WeightSlot> slots;
  uint64_t offset = 0;
  for (const WeightSet::Weight &w : weights.weights) {
    // A written weight that starts as zeros (optimizer state at the first
    // step: half of a model's training state) is not stored: the runtime
    // makes its writable copy as zeros.
    if (writable.contains(w.name) &&
        std::all_of(w.data, w.data + w.nbytes,
                    [](unsigned char b) { return b == 0; })) {
      slots.push_back({w.name, w.type, 0, w.nbytes, /*zeros=*/true});
      continue;
    }
    uint64_t aligned = (offset + 63) / 64 * 64;
    os.write_zeros(aligned - offset);
    os.write(reinterpret_cast<const char *>(w.data), w.nbytes);
    slots.push_back({w.name, w.type, aligned, w.nbytes});
    offset = aligned + w.nbytes;
  }
  totalBytes = offset;
  if (failed(closeOutput(os, path)))
    return failure();
  return slots;
}

LogicalResult modelc::writeSafetensors(const WeightSet &weights,
                                       StringRef path) {
  std::unique_ptr<llvm::raw_fd_ostream> out = openOutput(path);
  if (!out)
    return failure();
  llvm::raw_fd_ostream &os = *out;
  os << safetensorsHeader(weights);
  for (const WeightSet::Weight &w : weights.weights)
    os.write(reinterpret_cast<const char *>(w.data), w.nbytes);
  return closeOutput(os, path);
}
