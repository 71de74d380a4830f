//===- OnnxImport.cpp - reads a .onnx file into the graph dialect ---------===//
//
// Loading and checking the file, the entry point's inputs and outputs, the
// initializers (weights or constants) and the walk over the nodes; the
// per-op conversions are in OnnxOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/Importer.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <onnx/checker.h>

#include <cstring>

using namespace mlir;
using namespace modelc;
using namespace modelc::onnx_import;

bool modelc::onnx_import::isOnnxPath(StringRef path) {
  return llvm::sys::path::extension(path).equals_insensitive(".onnx");
}

Type modelc::onnx_import::elementTypeOf(MLIRContext &context,
                                        int32_t dataType) {
  Builder b(&context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::INT8:
    return b.getIntegerType(8);
  case onnx::TensorProto::INT16:
    return b.getIntegerType(16);
  case onnx::TensorProto::UINT8:
    return b.getIntegerType(8, /*isSigned=*/false);
  case onnx::TensorProto::UINT16:
    return b.getIntegerType(16, /*isSigned=*/false);
  case onnx::TensorProto::UINT32:
    return b.getIntegerType(32, /*isSigned=*/false);
  case onnx::TensorProto::UINT64:
    return b.getIntegerType(64, /*isSigned=*/false);
  default:
    return nullptr;
  }
}

static const char *dataTypeName(int32_t dataType) {
  return onnx::TensorProto::DataType_IsValid(dataType)
             ? onnx::TensorProto::DataType_Name(
                   static_cast<onnx::TensorProto::DataType>(dataType))
                   .c_str()
             : "an unknown data type";
}

bool modelc::onnx_import::tensorBytes(const onnx::TensorProto &tensor,
                                      std::vector<unsigned char> &bytes,
                                      std::string &why) {
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) {
    why = "its data is in an external file (read only when the model is "
          "read from a file)";
    return false;
  }
  int64_t count = 1;
  for (int64_t d : tensor.dims()) {
    // Negative or absurd sizes (over 2^40 elements) are a corrupt file.
    if (d < 0 || (d > 0 && count > (int64_t(1) << 40) / d)) {
      why = "its shape is invalid";
      return false;
    }
    count *= d;
  }
  size_t width = 0;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    width = 4;
    break;
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
  case onnx::TensorProto::DOUBLE:
    width = 8;
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    width = 2;
    break;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    width = 1;
    break;
  default:
    why = std::string("its element type ") + dataTypeName(tensor.data_type()) +
          " is not supported";
    return false;
  }
  // The data present must match the shape before anything is allocated:
  // a corrupt shape must not allocate what the file does not hold.
  size_t size = static_cast<size_t>(count) * width;
  if (!tensor.raw_data().empty()) {
    if (tensor.raw_data().size() != size) {
      why = "its raw data has " + std::to_string(tensor.raw_data().size()) +
            " bytes, its shape needs " + std::to_string(size);
      return false;
    }
    bytes.assign(tensor.raw_data().begin(), tensor.raw_data().end());
    return true;
  }
  int64_t present = 0;
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    present = tensor.float_data_size();
    break;
  case onnx::TensorProto::INT64:
    present = tensor.int64_data_size();
    break;
  case onnx::TensorProto::DOUBLE:
    present = tensor.double_data_size();
    break;
  case onnx::TensorProto::UINT32:
  case onnx::TensorProto::UINT64:
    present = tensor.uint64_data_size();
    break;
  default: // INT32, 8- and 16-bit types and BOOL travel in int32_data
    present = tensor.int32_data_size();
    break;
  }
  if (present != count) {
    why = "it has " + std::to_string(present) + " values, its shape needs " +
          std::to_string(count);
    return false;
  }
  bytes.assign(size, 0);
  auto fill = [&](const auto &field, auto convert) {
    if (static_cast<int64_t>(field.size()) != count) {
      why = "it has " + std::to_string(field.size()) + " values, its shape " +
            "needs " + std::to_string(count);
      return false;
    }
    for (int64_t i = 0; i < count; ++i)
      convert(field.Get(i), bytes.data() + i * width);
    return true;
  };
  switch (tensor.data_type()) {
  case onnx::TensorProto::FLOAT:
    return fill(tensor.float_data(),
                [](float v, unsigned char *p) { std::memcpy(p, &v, 4); });
  case onnx::TensorProto::INT64:
    return fill(tensor.int64_data(),
                [](int64_t v, unsigned char *p) { std::memcpy(p, &v, 8); });
  case onnx::TensorProto::INT32:
    return fill(tensor.int32_data(),
                [](int32_t v, unsigned char *p) { std::memcpy(p, &v, 4); });
  case onnx::TensorProto::DOUBLE:
    return fill(tensor.double_data(),
                [](double v, unsigned char *p) { std::memcpy(p, &v, 8); });
  case onnx::TensorProto::UINT32:
    return fill(tensor.uint64_data(), [](uint64_t v, unsigned char *p) {
      uint32_t bits = static_cast<uint32_t>(v);
      std::memcpy(p, &bits, 4);
    });
  case onnx::TensorProto::UINT64:
    return fill(tensor.uint64_data(),
                [](uint64_t v, unsigned char *p) { std::memcpy(p, &v, 8); });
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return fill(tensor.int32_data(), [](int32_t v, unsigned char *p) {
      *p = static_cast<unsigned char>(v);
    });
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    // 16-bit values travel in int32_data, one per entry.
    return fill(tensor.int32_data(), [](int32_t v, unsigned char *p) {
      uint16_t bits = static_cast<uint16_t>(v);
      std::memcpy(p, &bits, 2);
    });
  default: // BOOL
    return fill(tensor.int32_data(),
                [](int32_t v, unsigned char *p) { *p = v != 0; });
  }
}

//===----------------------------------------------------------------------===//
// Nodes: locations, attributes, inputs
//===----------------------------------------------------------------------===//

bool Importer::isUsed(llvm::StringRef name) const {
  for (const onnx::NodeProto &node : model.graph().node())
    for (const std::string &input : node.input())
      if (input == name)
        return true;
  for (const onnx::ValueInfoProto &out : model.graph().output())
    if (out.name() == name)
      return true;
  return false;
}

Location Importer::locationOf(const onnx::NodeProto &node) const {
  std::string name = node.name().empty()
                         ? "'" + node.op_type() + "' with output '" +
                               (node.output_size() ? node.output(0) : "") + "'"
                         : "'" + node.name() + "'";
  return NameLoc::get(StringAttr::get(&context, path + ":node " + name));
}

InFlightDiagnostic Importer::error(const onnx::NodeProto &node) const {
  return emitError(locationOf(node)) << node.op_type() << ": ";
}

const onnx::AttributeProto *Importer::attribute(const onnx::NodeProto &node,
                                                StringRef name) {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

int64_t Importer::intAttr(const onnx::NodeProto &node, StringRef name,
                          int64_t otherwise) {
  const onnx::AttributeProto *a = attribute(node, name);
  return a ? a->i() : otherwise;
}

float Importer::floatAttr(const onnx::NodeProto &node, StringRef name,
                          float otherwise) {
  const onnx::AttributeProto *a = attribute(node, name);
  return a ? a->f() : otherwise;
}

std::optional<SmallVector<int64_t>>
Importer::intsAttr(const onnx::NodeProto &node, StringRef name) {
  const onnx::AttributeProto *a = attribute(node, name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::string Importer::stringAttr(const onnx::NodeProto &node, StringRef name,
                                 StringRef otherwise) {
  const onnx::AttributeProto *a = attribute(node, name);
  return a ? a->s() : otherwise.str();
}

static RankedTensorType tensorTypeOf(MLIRContext &context,
                                     const onnx::TensorProto &tensor) {
  Type element = elementTypeOf(context, tensor.data_type());
  if (!element || llvm::any_of(tensor.dims(), [](int64_t d) { return d < 0; }))
    return nullptr;
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  return RankedTensorType::get(shape, element);
}

Value Importer::weightOf(const onnx::TensorProto &tensor,
                         const onnx::NodeProto &user) {
  if (Value ref = weightRefs.lookup(tensor.name()))
    return ref;
  InitializerData data{tensor.name(), {}};
  std::string why;
  if (!tensorBytes(tensor, data.bytes, why)) {
    error(user) << "initializer '" << tensor.name() << "': " << why;
    return nullptr;
  }
  // tensorBytes accepted the element type and the dimensions.
  RankedTensorType type = tensorTypeOf(context, tensor);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(
      module.getBody(),
      std::next(module.getBody()->begin(), static_cast<long>(weights.size())));
  Location loc = NameLoc::get(
      StringAttr::get(&context, path + ":initializer '" + tensor.name() + "'"));
  graph::WeightOp::create(builder, loc, tensor.name(), type,
                          /*source_dtype=*/TypeAttr(), /*frozen=*/false,
                          /*zeros=*/false, /*writable=*/false,
                          /*shard=*/IntegerAttr());
  weights.push_back(std::move(data));
  // The reference sits at the top of the entry block: every node may use it.
  auto function = *module.getOps<func::FuncOp>().begin();
  builder.setInsertionPointToStart(&function.getBody().front());
  Value ref = graph::WeightRefOp::create(
      builder, loc, type, FlatSymbolRefAttr::get(&context, tensor.name()));
  weightRefs[tensor.name()] = ref;
  return ref;
}

Value Importer::constantOf(const onnx::TensorProto &tensor,
                           const onnx::NodeProto &user) {
  std::vector<unsigned char> bytes;
  std::string why;
  if (!tensorBytes(tensor, bytes, why)) {
    error(user) << "constant '" << tensor.name() << "': " << why;
    return nullptr;
  }
  RankedTensorType type = tensorTypeOf(context, tensor);
  DenseElementsAttr value;
  if (type.getElementType().isInteger(1)) {
    SmallVector<bool> bits(bytes.begin(), bytes.end());
    value = DenseElementsAttr::get(type, ArrayRef<bool>(bits));
  } else {
    value = DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(reinterpret_cast<const char *>(bytes.data()),
                             bytes.size()));
  }
  return graph::ConstantOp::create(builder, locationOf(user), value);
}

Value Importer::input(const onnx::NodeProto &node, int i) {
  if (!hasInput(node, i)) {
    error(node) << "input " << i << " is missing";
    return nullptr;
  }
  const std::string &name = node.input(i);
  if (Value v = values.lookup(name))
    return v;
  if (const onnx::TensorProto *tensor = constants.lookup(name)) {
    // Initializers are weights (named as in the file, replaceable with
    // --weights); Constant nodes' values are constants the graph passes
    // can fold.
    bool initializer = initializerNames.contains(name);
    Value v = initializer ? weightOf(*tensor, node) : constantOf(*tensor, node);
    if (v && !initializer)
      values[name] = v;
    return v;
  }
  error(node) << "input '" << name << "' is not defined before the node";
  return nullptr;
}

std::optional<SmallVector<int64_t>>
Importer::constantInts(const onnx::NodeProto &node, int i) {
  if (!hasInput(node, i))
    return std::nullopt;
  std::optional<IntTensor> t = intConstant(node.input(i));
  if (!t)
    return std::nullopt;
  return t->data;
}

std::optional<double> Importer::constantScalar(const onnx::NodeProto &node,
                                               int i) {
  std::optional<SmallVector<double>> numbers = constantNumbers(node, i);
  if (!numbers || numbers->size() != 1)
    return std::nullopt;
  return numbers->front();
}

std::optional<SmallVector<double>>
Importer::constantNumbers(const onnx::NodeProto &node, int i) {
  if (!hasInput(node, i))
    return std::nullopt;
  const onnx::TensorProto *tensor = constants.lookup(node.input(i));
  if (!tensor)
    return std::nullopt;
  std::vector<unsigned char> bytes;
  std::string why;
  if (!tensorBytes(*tensor, bytes, why))
    return std::nullopt;
  auto read = [&](auto sample) -> std::optional<SmallVector<double>> {
    using T = decltype(sample);
    if (bytes.size() % sizeof(T) != 0)
      return std::nullopt;
    SmallVector<double> out(bytes.size() / sizeof(T));
    for (size_t k = 0; k < out.size(); ++k) {
      T v;
      std::memcpy(&v, bytes.data() + k * sizeof(T), sizeof(T));
      out[k] = static_cast<double>(v);
    }
    return out;
  };
  switch (tensor->data_type()) {
  case onnx::TensorProto::FLOAT:
    return read(float());
  case onnx::TensorProto::DOUBLE:
    return read(double());
  case onnx::TensorProto::INT64:
    return read(int64_t());
  case onnx::TensorProto::INT32:
    return read(int32_t());
  case onnx::TensorProto::BOOL: // one byte each (Dropout's training_mode)
  case onnx::TensorProto::UINT8:
    return read(uint8_t());
  case onnx::TensorProto::INT8:
    return read(int8_t());
  case onnx::TensorProto::INT16:
    return read(int16_t());
  case onnx::TensorProto::UINT16:
    return read(uint16_t());
  case onnx::TensorProto::UINT32:
    return read(uint32_t());
  case onnx::TensorProto::UINT64:
    return read(uint64_t());
  default:
    return std::nullopt;
  }
}

void Importer::define(const onnx::NodeProto &node, Value value, int i) {
  if (i < node.output_size() && !node.output(i).empty())
    values[node.output(i)] = value;
}

std::optional<Importer::IntTensor>
Importer::intConstant(const std::string &name) {
  const onnx::TensorProto *tensor = constants.lookup(name);
  if (!tensor || (tensor->data_type() != onnx::TensorProto::INT64 &&
                  tensor->data_type() != onnx::TensorProto::INT32))
    return std::nullopt;
  std::vector<unsigned char> bytes;
  std::string why;
  if (!tensorBytes(*tensor, bytes, why))
    return std::nullopt;
  IntTensor t;
  t.dims.assign(tensor->dims().begin(), tensor->dims().end());
  bool wide = tensor->data_type() == onnx::TensorProto::INT64;
  t.int32 = !wide;
  for (size_t off = 0; off < bytes.size(); off += wide ? 8 : 4) {
    if (wide) {
      int64_t v;
      std::memcpy(&v, bytes.data() + off, 8);
      t.data.push_back(v);
    } else {
      int32_t v;
      std::memcpy(&v, bytes.data() + off, 4);
      t.data.push_back(v);
    }
  }
  return t;
}

void Importer::defineIntConstant(const onnx::NodeProto &node, int i,
                                 const IntTensor &value) {
  auto tensor = std::make_unique<onnx::TensorProto>();
  tensor->set_name(node.output(i));
  tensor->set_data_type(value.int32 ? onnx::TensorProto::INT32
                                    : onnx::TensorProto::INT64);
  for (int64_t d : value.dims)
    tensor->add_dims(d);
  for (int64_t v : value.data) {
    if (value.int32)
      tensor->add_int32_data(static_cast<int32_t>(v));
    else
      tensor->add_int64_data(v);
  }
  constants[node.output(i)] = tensor.get();
  ownedConstants.push_back(std::move(tensor));
}

void Importer::defineConstant(const onnx::NodeProto &node,
                              const onnx::TensorProto &tensor) {
  auto copy = std::make_unique<onnx::TensorProto>(tensor);
  copy->set_name(node.output(0));
  constants[node.output(0)] = copy.get();
  ownedConstants.push_back(std::move(copy));
}

//===----------------------------------------------------------------------===//
// The graph
//===----------------------------------------------------------------------===//

/// Every op type without a converter, with its count and first node, in one
/// error.
LogicalResult Importer::checkSupported() {
  llvm::MapVector<StringRef, std::pair<int, const onnx::NodeProto *>> missing;
  for (const onnx::NodeProto &node : model.graph().node()) {
    bool known = (node.domain().empty() || node.domain() == "ai.onnx") &&
                 (nodeConverters().count(node.op_type()) ||
                  foldOnlyOps().contains(node.op_type()));
    if (known)
      continue;
    auto &entry = missing[node.op_type()];
    if (!entry.second)
      entry.second = &node;
    ++entry.first;
  }
  if (missing.empty())
    return success();
  InFlightDiagnostic diag =
      emitError(NameLoc::get(StringAttr::get(&context, path)))
      << missing.size() << " ONNX op type"
      << (missing.size() == 1 ? " is" : "s are") << " not supported yet:";
  for (auto &[type, entry] : missing) {
    const onnx::NodeProto &node = *entry.second;
    diag << "\n  " << type;
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      diag << " (domain '" << node.domain() << "')";
    diag << ": " << entry.first << " node" << (entry.first == 1 ? "" : "s")
         << ", first "
         << (node.name().empty() ? "with output '" + node.output(0) + "'"
                                 : "'" + node.name() + "'");
  }
  return failure();
}

/// --dim names a dimension some input's axis is called (dim_param).
LogicalResult Importer::checkDimsUsed(const ImportOptions &options,
                                      const llvm::StringSet<> &usedDims) {
  bool ok = true;
  for (const auto &dim : options.dims) {
    if (usedDims.contains(dim.getKey()))
      continue;
    std::string params;
    for (const onnx::ValueInfoProto &in : model.graph().input())
      for (const auto &d : in.type().tensor_type().shape().dim())
        if (d.has_dim_param() &&
            params.find("'" + d.dim_param() + "'") == std::string::npos)
          params += (params.empty() ? "" : ", ") + ("'" + d.dim_param() + "'");
    emitError(NameLoc::get(StringAttr::get(&context, path)))
        << "--dim names '" << dim.getKey()
        << "', which no input's dimension is called ("
        << (params.empty() ? std::string("the inputs name none")
                           : "the inputs name " + params)
        << ")";
    ok = false;
  }
  return success(ok);
}

LogicalResult Importer::namedDimensions(
    const ImportOptions &options,
    llvm::StringMap<std::pair<int64_t, std::string>> &named,
    llvm::StringMap<std::string> &dynamicNames) {
  bool failed = false;
  for (const onnx::ValueInfoProto &in : model.graph().input()) {
    auto given = options.inputShapes.find(in.name());
    if (given == options.inputShapes.end() ||
        !in.type().tensor_type().has_shape() ||
        in.type().tensor_type().shape().dim_size() !=
            static_cast<int>(given->second.size()))
      continue;
    auto givenDims = options.inputShapeDims.find(in.name());
    for (auto [i, d] : llvm::enumerate(in.type().tensor_type().shape().dim())) {
      if (!d.has_dim_param() || d.dim_param().empty())
        continue;
      if (givenDims != options.inputShapeDims.end() &&
          !givenDims->second[i].empty()) {
        if (auto fixed = named.find(d.dim_param()); fixed != named.end()) {
          emitError(NameLoc::get(StringAttr::get(&context, path)))
              << "--input-shape gives dimension '" << d.dim_param() << "' size "
              << fixed->second.first << " in '" << fixed->second.second
              << "' and dynamic dimension '" << givenDims->second[i] << "' in '"
              << in.name() << "'";
          failed = true;
        }
        dynamicNames[d.dim_param()] = givenDims->second[i];
        continue;
      }
      int64_t size = given->second[i];
      if (dynamicNames.count(d.dim_param())) {
        emitError(NameLoc::get(StringAttr::get(&context, path)))
            << "--input-shape gives dimension '" << d.dim_param()
            << "' as dynamic dimension '" << dynamicNames[d.dim_param()]
            << "' in one input and size " << size << " in '" << in.name()
            << "'";
        failed = true;
        continue;
      }
      auto [it, fresh] = named.try_emplace(d.dim_param(), size, in.name());
      if (!fresh && it->second.first != size) {
        emitError(NameLoc::get(StringAttr::get(&context, path)))
            << "--input-shape gives dimension '" << d.dim_param() << "' size "
            << it->second.first << " in '" << it->second.second << "' and "
            << size << " in '" << in.name() << "'";
        failed = true;
      }
    }
  }
  return failure(failed);
}

LogicalResult Importer::givenShape(const ImportOptions &options,
                                   const onnx::ValueInfoProto &in, Location loc,
                                   SmallVector<int64_t> &shape,
                                   SmallVector<std::string> &inputDims,
                                   llvm::StringSet<> &usedDims) {
  const onnx::TypeProto_Tensor &t = in.type().tensor_type();
  bool failed = false;
  shape = options.inputShapes.lookup(in.name());
  if (t.has_shape() &&
      static_cast<size_t>(t.shape().dim_size()) != shape.size()) {
    emitError(loc) << "--input-shape " << in.name() << " has " << shape.size()
                   << " dimensions, the model's input has "
                   << t.shape().dim_size();
    failed = true;
  } else if (t.has_shape()) {
    for (auto [i, d] : llvm::enumerate(t.shape().dim()))
      if (d.has_dim_value() && d.dim_value() > 0 && d.dim_value() != shape[i]) {
        auto namedDims = options.inputShapeDims.find(in.name());
        std::string what =
            namedDims != options.inputShapeDims.end() &&
                    !namedDims->second[i].empty()
                ? "dynamic dimension '" + namedDims->second[i] + "'"
                : std::to_string(shape[i]);
        emitError(loc) << "--input-shape " << in.name() << " gives " << what
                       << " for dimension " << i
                       << ", which the model fixes at " << d.dim_value();
        failed = true;
        break;
      }
  }
  // Axes named as dynamic dimensions (x=batchx3x224x224): held at the
  // max, named in graph.dims.
  if (auto named = options.inputShapeDims.find(in.name());
      named != options.inputShapeDims.end() &&
      named->second.size() == shape.size()) {
    for (auto [i, dim] : llvm::enumerate(named->second))
      if (!dim.empty()) {
        inputDims.resize(shape.size());
        inputDims[i] = dim;
        usedDims.insert(dim);
      }
  }
  return failure(failed);
}

LogicalResult Importer::addInputs(const ImportOptions &options,
                                  func::FuncOp &function) {
  for (const onnx::TensorProto &t : model.graph().initializer()) {
    initializerNames.insert(t.name());
    constants[t.name()] = &t;
  }
  SmallVector<Type> types;
  SmallVector<std::string> names;
  // Per input, its axes' dynamic dimensions (--dim), "" for static axes.
  SmallVector<SmallVector<std::string>> axisDims;
  llvm::StringSet<> usedDims;
  std::string dynamic;
  bool failedType = false;
  // Named dimensions ('batch', 'N') that --input-shape fixes: the same name
  // in another input means the same size.
  llvm::StringMap<std::pair<int64_t, std::string>> named;
  // Names (dim_param) of axes --input-shape gives as a dynamic dimension:
  // that dimension wherever else they appear.
  llvm::StringMap<std::string> dynamicNames;
  if (failed(namedDimensions(options, named, dynamicNames)))
    failedType = true;
  for (const onnx::ValueInfoProto &in : model.graph().input()) {
    if (initializerNames.contains(in.name()))
      continue; // an initializer listed as an input (older exporters)
    const onnx::TypeProto_Tensor &t = in.type().tensor_type();
    Type element = elementTypeOf(context, t.elem_type());
    Location loc = NameLoc::get(
        StringAttr::get(&context, path + ":input '" + in.name() + "'"));
    if (!in.type().has_tensor_type() || !element) {
      emitError(loc) << "input '" << in.name() << "': "
                     << (in.type().has_tensor_type()
                             ? std::string("element type ") +
                                   dataTypeName(t.elem_type())
                             : std::string("a non-tensor type"))
                     << " is not supported (tensors of f32, f16, bf16, f64, "
                        "bool and 8- to 64-bit integers are)";
      failedType = true;
      continue;
    }
    SmallVector<int64_t> shape;
    SmallVector<std::string> inputDims;
    if (options.inputShapes.count(in.name())) {
      if (failed(givenShape(options, in, loc, shape, inputDims, usedDims)))
        failedType = true;
    } else if (!t.has_shape()) {
      dynamic += "\n  " + in.name() + ": no shape";
    } else {
      std::string dims;
      for (const onnx::TensorShapeProto_Dimension &d : t.shape().dim()) {
        if (d.has_dim_value() && d.dim_value() > (int64_t(1) << 40)) {
          emitError(loc) << "input '" << in.name() << "': dimension "
                         << shape.size() << " of size " << d.dim_value()
                         << " is too large";
          failedType = true;
          shape.push_back(1);
          continue;
        }
        if (d.has_dim_value() && d.dim_value() > 0) {
          shape.push_back(d.dim_value());
          continue;
        }
        if (d.has_dim_value() && d.dim_value() == 0) {
          emitError(loc) << "input '" << in.name() << "': dimension "
                         << shape.size()
                         << " has size 0; empty tensors are not supported";
          failedType = true;
          shape.push_back(1);
          continue;
        }
        if (d.has_dim_param() && named.count(d.dim_param())) {
          shape.push_back(named.lookup(d.dim_param()).first);
          continue;
        }
        // A dynamic dimension, by its own name or as --input-shape named
        // it in another input: held at its max (docs/dynamic.md).
        std::string dynamicName =
            !d.has_dim_param()                  ? std::string()
            : dynamicNames.count(d.dim_param()) ? dynamicNames[d.dim_param()]
            : options.dims.count(d.dim_param()) ? d.dim_param()
                                                : std::string();
        if (!dynamicName.empty() && options.dims.lookup(dynamicName).min ==
                                        options.dims.lookup(dynamicName).max) {
          // --dim NAME=N..N: one size, a static axis.
          usedDims.insert(dynamicName);
          shape.push_back(options.dims.lookup(dynamicName).max);
          continue;
        }
        if (!dynamicName.empty()) {
          inputDims.resize(t.shape().dim_size());
          inputDims[shape.size()] = dynamicName;
          usedDims.insert(dynamicName);
          shape.push_back(options.dims.lookup(dynamicName).max);
          continue;
        }
        dims += (dims.empty() ? "" : ", ") + std::string("dimension ") +
                std::to_string(shape.size()) +
                (d.has_dim_param() ? " ('" + d.dim_param() + "')" : "");
        shape.push_back(-1);
      }
      if (!dims.empty())
        dynamic += "\n  " + in.name() + ": " + dims;
    }
    types.push_back(RankedTensorType::get(shape, element));
    names.push_back(in.name());
    axisDims.push_back(std::move(inputDims));
  }
  if (failed(checkDimsUsed(options, usedDims)))
    failedType = true;
  for (const auto &given : options.inputShapes)
    if (!llvm::is_contained(names, given.getKey().str())) {
      emitError(NameLoc::get(StringAttr::get(&context, path)))
          << "--input-shape names '" << given.getKey()
          << "', which is not an input of the model";
      failedType = true;
    }
  if (!dynamic.empty()) {
    emitError(NameLoc::get(StringAttr::get(&context, path)))
        << "inputs with dynamic dimensions need --input-shape "
           "NAME=D0xD1x... (repeat per input), or --dim NAME=MIN..MAX for a "
           "named one:"
        << dynamic;
    return failure();
  }
  if (failedType)
    return failure();
  builder.setInsertionPointToEnd(module.getBody());
  // The dynamic dimensions the inputs name, declared in --dim's order.
  for (const auto &dim : options.dims)
    if (usedDims.contains(dim.getKey()) &&
        dim.getValue().min != dim.getValue().max)
      graph::DimOp::create(
          builder, NameLoc::get(StringAttr::get(&context, path)), dim.getKey(),
          dim.getValue().min, dim.getValue().max, dim.getValue().opt);
  std::string entry = "forward";
  function = func::FuncOp::create(builder,
                                  NameLoc::get(StringAttr::get(&context, path)),
                                  entry, builder.getFunctionType(types, {}));
  Block *body = function.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(names)) {
    function.setArgAttr(i, "graph.name", builder.getStringAttr(name));
    values[name] = body->getArgument(i);
    if (!axisDims[i].empty())
      function.setArgAttr(i, graph::kDimsAttrName,
                          builder.getStrArrayAttr(SmallVector<StringRef>(
                              axisDims[i].begin(), axisDims[i].end())));
  }
  return success();
}

std::string Importer::symbolicInput(const onnx::NodeProto &node) const {
  for (const std::string &in : node.input())
    for (const std::string &dim : symbolsOf(in))
      if (!dim.empty())
        return dim;
  return "";
}

std::optional<LogicalResult>
Importer::importCutToSize(const onnx::NodeProto &node) {
  const std::string &type = node.op_type();
  auto symbol = [&](int i) -> std::string {
    if (!hasInput(node, i))
      return "";
    ArrayRef<std::string> symbols = symbolsOf(node.input(i));
    return symbols.size() == 1 ? symbols[0] : "";
  };
  if (type == "Range" && node.input_size() == 3 && !symbol(1).empty()) {
    // torch.arange(x.size(1)): an iota at the max, cut to the size.
    std::optional<IntTensor> start = intConstant(node.input(0)),
                             limit = intConstant(node.input(1)),
                             delta = intConstant(node.input(2));
    if (!start || !limit || !delta || start->data.size() != 1 ||
        delta->data.size() != 1 || !symbol(0).empty() || !symbol(2).empty() ||
        start->data[0] != 0 || delta->data[0] != 1) {
      error(node) << "a Range of the size of dynamic dimension '" << symbol(1)
                  << "' other than from 0 in steps of 1 is not supported "
                     "yet (give --input-shape for a static build)";
      return failure();
    }
    int64_t max = limit->data[0];
    Type element = start->int32 ? builder.getI32Type() : builder.getI64Type();
    auto iotaType = RankedTensorType::get({max}, element);
    SmallVector<APInt> iota;
    for (int64_t i = 0; i < max; ++i)
      iota.push_back(APInt(start->int32 ? 32 : 64, i, /*isSigned=*/true));
    Location loc = locationOf(node);
    Value all = graph::ConstantOp::create(
        builder, loc, DenseElementsAttr::get(iotaType, iota));
    auto cut = graph::SliceOp::create(builder, loc, all,
                                      builder.getDenseI64ArrayAttr({0}),
                                      builder.getDenseI64ArrayAttr({max}),
                                      DenseI64ArrayAttr(), DenseI64ArrayAttr());
    cut->setAttr(graph::kDimsAttrName,
                 builder.getArrayAttr({builder.getStringAttr(symbol(1))}));
    define(node, cut.getResult());
    return success();
  }
  if (type == "Slice" && !symbol(2).empty() &&
      symbolsOf(node.input(0)).empty() && symbol(1).empty() &&
      symbol(3).empty() && symbol(4).empty()) {
    // x[:, :n.size(1)]: a slice at the max that ends at the size.
    ArrayRef<std::string> ends = symbolsOf(node.input(2));
    auto converter = nodeConverters().find("Slice");
    if (failed(converter->second(*this, node)))
      return failure();
    Value result = values.lookup(node.output(0));
    auto slice = result ? result.getDefiningOp<graph::SliceOp>() : nullptr;
    if (!slice)
      return failure();
    graph::NormalizedSlice window = slice.getNormalizedSlice();
    std::optional<SmallVector<int64_t>> endsAtMax = constantInts(node, 2);
    SmallVector<Attribute> dims(slice.getType().getRank(),
                                builder.getStringAttr(""));
    for (auto [i, axis] : llvm::enumerate(window.axes)) {
      if (i >= ends.size() || ends[i].empty())
        continue;
      // (An axis shorter than the dimension's max would clamp the end.)
      if (window.starts[axis] != 0 || window.steps[axis] != 1 || !endsAtMax ||
          window.sizes[axis] != (*endsAtMax)[i]) {
        error(node) << "a Slice that ends at the size of dynamic dimension '"
                    << ends[i]
                    << "' is supported yet only from 0, in steps of 1, on an "
                       "axis at least as long as the dimension's max (give "
                       "--input-shape for a static build)";
        return failure();
      }
      dims[axis] = builder.getStringAttr(ends[i]);
    }
    slice->setAttr(graph::kDimsAttrName, builder.getArrayAttr(dims));
    return success();
  }
  return std::nullopt;
}

std::optional<graph::SymShape>
Importer::symbolicShapeOf(const std::string &name) {
  Value v = values.lookup(name);
  if (!v) // a constant
    if (RankedTensorType type = valueType(name))
      return graph::staticShape(type.getShape());
  auto type = v ? dyn_cast<RankedTensorType>(v.getType()) : nullptr;
  if (!type)
    return std::nullopt;
  Region *region = v.getParentRegion();
  auto function =
      region ? dyn_cast<func::FuncOp>(region->getParentOp()) : func::FuncOp();
  if (!function)
    return graph::staticShape(type.getShape());
  // The function built so far (a few Shape nodes per model: not cached,
  // as foldConverted erases ops).
  FailureOr<graph::SymbolicShapes> shapes =
      graph::inferSymbolicShapes(function, /*emitErrors=*/false);
  if (failed(shapes))
    return std::nullopt;
  if (const graph::SymShape *shape = shapes->lookup(v))
    return *shape;
  return graph::staticShape(type.getShape());
}

std::string Importer::dynamicDimOf(const std::string &name) {
  if (std::optional<graph::SymShape> shape = symbolicShapeOf(name)) {
    for (const graph::SymDim &d : *shape)
      if (!d.isStatic())
        return d.str();
    return "";
  }
  Value root = values.lookup(name);
  if (!root)
    return ""; // a constant
  // Backwards through what computed it, to the arguments that name a
  // dynamic dimension.
  SmallVector<Value> stack = {root};
  llvm::DenseSet<Value> seen;
  std::string found;
  while (!stack.empty() && found.empty()) {
    Value v = stack.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto function = cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (auto dims = function.getArgAttrOfType<ArrayAttr>(
              arg.getArgNumber(), graph::kDimsAttrName))
        for (auto d : dims.getAsRange<StringAttr>())
          if (!d.empty())
            found = d.str();
      continue;
    }
    v.getDefiningOp()->walk([&](Operation *op) {
      for (Value operand : op->getOperands())
        stack.push_back(operand);
    });
  }
  // (Not cached: foldConverted erases ops, and a new value may take an
  // erased one's address.)
  return found;
}

FailureOr<ImportedModel> Importer::run(const ImportOptions &options) {
  forTraining = options.training;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      defaultOpset = o.version();
  OwningOpRef<ModuleOp> owned =
      ModuleOp::create(NameLoc::get(StringAttr::get(&context, path)));
  module = *owned;
  func::FuncOp function;
  if (failed(checkSupported()) || failed(addInputs(options, function)))
    return failure();
  builder.setInsertionPointToEnd(&function.getBody().front());
  // A node that fails reports its error and the import goes on, so that
  // one run lists every unsupported attribute value; what reads a failed
  // node's outputs is skipped without an error of its own.
  llvm::StringSet<> failedValues;
  int failedNodes = 0;
  const int maxFailedNodes = 20;
  for (const onnx::NodeProto &node : model.graph().node()) {
    builder.setInsertionPointToEnd(&function.getBody().front());
    auto markFailed = [&] {
      for (const std::string &out : node.output())
        if (!out.empty()) // "" is an omitted optional output
          failedValues.insert(out);
    };
    if (llvm::any_of(node.input(), [&](const std::string &in) {
          return failedValues.contains(in);
        })) {
      markFailed();
      continue;
    }
    if (std::optional<LogicalResult> cut = importCutToSize(node)) {
      if (failed(*cut)) {
        markFailed();
        if (++failedNodes == maxFailedNodes)
          return failure();
      }
      continue;
    }
    if (tryFold(node)) {
      if (foldError) { // it computed with a dynamic dimension's size
        foldError = false;
        markFailed();
        if (++failedNodes == maxFailedNodes)
          return failure();
      }
      continue;
    }
    // A shape with a dynamic dimension's size (symbolicInts) is read only
    // by a Reshape, which keeps the dimension (checked there).
    if (std::string dim = symbolicInput(node);
        !dim.empty() && node.op_type() != "Reshape") {
      error(node) << "uses the size of dynamic dimension '" << dim
                  << "' (from a Shape node); not supported yet (give "
                     "--input-shape for a static build)";
      markFailed();
      if (++failedNodes == maxFailedNodes)
        return failure();
      continue;
    }
    auto converter = nodeConverters().find(node.op_type());
    LogicalResult converted = failure();
    if (converter == nodeConverters().end())
      error(node) << "is supported only as a shape computation folded at "
                     "import; on runtime values it is not supported yet";
    else {
      // A node of constants is converted, then evaluated (foldConverted).
      Block &body = function.getBody().front();
      Operation *before = body.empty() ? nullptr : &body.back();
      llvm::StringSet<> cached;
      for (const std::string &in : node.input())
        if (!in.empty() && values.count(in))
          cached.insert(in);
      converted = converter->second(*this, node);
      if (succeeded(converted))
        foldConverted(node, before, cached);
    }
    if (succeeded(converted))
      continue;
    markFailed();
    if (++failedNodes == maxFailedNodes) {
      emitError(NameLoc::get(StringAttr::get(&context, path)))
          << "stopped after " << maxFailedNodes << " nodes with errors";
      return failure();
    }
  }
  if (failedNodes)
    return failure();
  SmallVector<Value> results;
  SmallVector<std::string> resultNames;
  for (const onnx::ValueInfoProto &out : model.graph().output()) {
    Value v = values.lookup(out.name());
    // A shape with a dynamic dimension's size would be output at the max.
    if (!v && llvm::any_of(symbolsOf(out.name()),
                           [](const std::string &s) { return !s.empty(); })) {
      emitError(NameLoc::get(StringAttr::get(&context, path)))
          << "output '" << out.name()
          << "' is a shape computed from a dynamic dimension's size; not "
             "supported yet (give --input-shape for a static build)";
      return failure();
    }
    if (!v)
      if (const onnx::TensorProto *c = constants.lookup(out.name())) {
        // An output computed at import (a folded shape computation).
        onnx::NodeProto origin;
        origin.set_name(out.name());
        origin.set_op_type("Constant");
        v = constantOf(*c, origin);
        if (!v)
          return failure();
      }
    if (!v) {
      emitError(NameLoc::get(StringAttr::get(&context, path)))
          << "output '" << out.name() << "' is not computed by any node";
      return failure();
    }
    results.push_back(v);
    resultNames.push_back(out.name());
  }
  builder.setInsertionPointToEnd(&function.getBody().front());
  func::ReturnOp::create(builder, function.getLoc(), results);
  function.setType(builder.getFunctionType(function.getArgumentTypes(),
                                           ValueRange(results).getTypes()));
  for (auto [i, name] : llvm::enumerate(resultNames))
    function.setResultAttr(i, "graph.name", builder.getStringAttr(name));
  ImportedModel imported;
  imported.module = std::move(owned);
  imported.weights = std::move(weights);
  return imported;
}

FailureOr<ImportedModel>
modelc::onnx_import::importOnnxFile(StringRef path, MLIRContext &context,
                                    const ImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(NameLoc::get(StringAttr::get(&context, path)))
        << "cannot read the file: " << buffer.getError().message();
    return failure();
  }
  // External data lives in the model's folder.
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  return importOnnxBuffer((*buffer)->getBuffer(), path, context, options,
                          dir.str());
}

FailureOr<ImportedModel> modelc::onnx_import::importOnnxBuffer(
    StringRef bytes, StringRef path, MLIRContext &context,
    const ImportOptions &options, std::optional<StringRef> dataDir) {
  Location fileLoc = NameLoc::get(StringAttr::get(&context, path));
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    emitError(fileLoc) << "not a valid ONNX model (the protobuf does not "
                          "parse: truncated, corrupted or not ONNX)";
    return failure();
  }
  if (dataDir && failed(loadExternalData(model, *dataDir, fileLoc)))
    return failure();
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception &e) {
    // One line: the checker's message spans several.
    std::string message;
    for (char c : StringRef(e.what()).trim()) {
      bool space = c == '\n' || c == ' ' || c == '\t';
      if (!space || (!message.empty() && message.back() != ' '))
        message += space ? ' ' : c;
    }
    emitError(fileLoc) << "the ONNX checker rejects the model: " << message;
    return failure();
  }
  context.loadDialect<graph::GraphDialect, func::FuncDialect>();
  Importer importer(context, path, model);
  return importer.run(options);
}
