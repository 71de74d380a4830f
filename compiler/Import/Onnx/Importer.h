//===- Importer.h - state of one ONNX import (private) ----------*- C++ -*-===//
//
// Private to compiler/Import/Onnx: the values, constants and weights built
// so far, and the helpers op converters (OnnxOps.cpp) use to read a node's
// inputs and attributes. Compiled with exceptions: libonnx reports through
// them, and they never leave this library.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_IMPORT_ONNX_IMPORTER_H
#define MODELC_COMPILER_IMPORT_ONNX_IMPORTER_H

#include "compiler/Import/Onnx/OnnxImport.h"
#include "dialects/Graph/IR/SymbolicShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <functional>
#include <optional>

namespace modelc::onnx_import {

class Importer;

/// Converts one node; emits its error and fails when the node uses
/// something modelc does not support.
using NodeConverter =
    std::function<mlir::LogicalResult(Importer &, const onnx::NodeProto &)>;

/// The converters, by ONNX op type (OnnxOps.cpp).
const llvm::StringMap<NodeConverter> &nodeConverters();

/// Adds the ops spelled as formulas over several graph ops
/// (OnnxComposite.cpp).
void addCompositeConverters(llvm::StringMap<NodeConverter> &table);
/// QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
/// QLinearMatMul (OnnxQuantize.cpp).
void addQuantizeConverters(llvm::StringMap<NodeConverter> &table);

/// Adds Expand, Tile, Split, Pad and the boolean ops
/// (OnnxDataMovement.cpp).
void addDataMovementConverters(llvm::StringMap<NodeConverter> &table);

/// Adds the index-based ops: GatherElements, Trilu, ArgMax/ArgMin, Hardmax,
/// OneHot, EyeLike, the losses (OnnxIndexing.cpp).
void addIndexingConverters(llvm::StringMap<NodeConverter> &table);

/// Adds Resize/Upsample, Pad's reflect and edge modes, DepthToSpace,
/// SpaceToDepth (OnnxResize.cpp).
void addResizeConverters(llvm::StringMap<NodeConverter> &table);

/// Adds RNN, GRU and LSTM (OnnxRecurrent.cpp).
void addRecurrentConverters(llvm::StringMap<NodeConverter> &table);

/// Adds Einsum (OnnxEinsum.cpp).
void addEinsumConverter(llvm::StringMap<NodeConverter> &table);

/// Pad's reflect (`reflect`) or edge mode of `x` by `pads` ([begin..., end...]
/// as ONNX orders them), binding the node's output (OnnxResize.cpp).
mlir::LogicalResult padByGather(Importer &im, const onnx::NodeProto &node,
                                mlir::Value x, llvm::ArrayRef<int64_t> pads,
                                bool reflect);

/// Op types that are supported only as shape computations folded at import
/// (Shape, ConstantOfShape, Range; OnnxFold.cpp).
const llvm::StringSet<> &foldOnlyOps();

class Importer {
public:
  Importer(mlir::MLIRContext &context, llvm::StringRef path,
           const onnx::ModelProto &model)
      : context(context), builder(&context), path(path.str()), model(model) {}

  /// Builds the module; false after errors.
  mlir::FailureOr<ImportedModel> run(const ImportOptions &options);

  //===--- for the converters ---===//

  /// The location of `node`: "model.onnx:node 'name'".
  mlir::Location locationOf(const onnx::NodeProto &node) const;
  /// An error at `node`.
  mlir::InFlightDiagnostic error(const onnx::NodeProto &node) const;
  /// Input `i` of `node` as a value (an initializer becomes a weight, a
  /// constant a graph.constant); null, after an error, if it has none.
  mlir::Value input(const onnx::NodeProto &node, int i);
  /// Whether input `i` is present (ONNX skips optional inputs with "").
  static bool hasInput(const onnx::NodeProto &node, int i) {
    return i < node.input_size() && !node.input(i).empty();
  }
  /// Input `i` as constant integers (initializer or Constant output).
  std::optional<llvm::SmallVector<int64_t>>
  constantInts(const onnx::NodeProto &node, int i);
  /// Input `i` as a constant scalar (f32, f64, i32 or i64).
  std::optional<double> constantScalar(const onnx::NodeProto &node, int i);
  /// Input `i` as constant numbers (f32, f64, i32 or i64), row-major.
  std::optional<llvm::SmallVector<double>>
  constantNumbers(const onnx::NodeProto &node, int i);
  /// Whether a node or the graph's outputs read the value `name`.
  bool isUsed(llvm::StringRef name) const;
  /// Binds output `i` of `node` to `value`.
  void define(const onnx::NodeProto &node, mlir::Value value, int i = 0);
  /// Records `tensor` as the constant value of output 0 of `node`.
  void defineConstant(const onnx::NodeProto &node,
                      const onnx::TensorProto &tensor);

  static const onnx::AttributeProto *attribute(const onnx::NodeProto &node,
                                               llvm::StringRef name);
  static int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                         int64_t otherwise);
  static float floatAttr(const onnx::NodeProto &node, llvm::StringRef name,
                         float otherwise);
  static std::optional<llvm::SmallVector<int64_t>>
  intsAttr(const onnx::NodeProto &node, llvm::StringRef name);
  static std::string stringAttr(const onnx::NodeProto &node,
                                llvm::StringRef name,
                                llvm::StringRef otherwise);
  /// An integer constant (initializer or folded value) by name.
  struct IntTensor {
    llvm::SmallVector<int64_t> dims;
    llvm::SmallVector<int64_t> data;
    /// An INT32 tensor (else INT64): folds keep their inputs' type.
    bool int32 = false;
  };
  std::optional<IntTensor> intConstant(const std::string &name);
  /// The constant (initializer, Constant output or folded value) named
  /// `name`, of any element type, or null.
  const onnx::TensorProto *constantTensor(const std::string &name) const {
    return constants.lookup(name);
  }
  /// Records `value` as the constant output `i` of `node` (int64).
  void defineIntConstant(const onnx::NodeProto &node, int i,
                         const IntTensor &value);
  /// The static type of an input that is a computed value, or null.
  mlir::RankedTensorType valueType(const std::string &name) const {
    mlir::Value v = values.lookup(name);
    return v ? mlir::cast<mlir::RankedTensorType>(v.getType()) : nullptr;
  }
  /// Shape computations that torch.onnx.export writes (Shape, Gather,
  /// Unsqueeze, Concat, ...) folded to constants when their inputs are
  /// constant or their shapes static (OnnxFold.cpp); false when `node` is
  /// not such a computation.
  bool tryFold(const onnx::NodeProto &node);
  /// The dynamic dimension (docs/dynamic.md) value `name` carries, or ""
  /// where it is computed without one.
  std::string dynamicDimOf(const std::string &name);
  /// The symbolic shape (SymbolicShape.h) of the value `name` (a static
  /// shape for a constant); nullopt when the sizes of the function built
  /// so far do not follow from its inputs' dynamic dimensions.
  std::optional<graph::SymShape> symbolicShapeOf(const std::string &name);
  /// After `node` was converted (its ops follow `before`, or start the
  /// block when it is null): when every input is a constant (not an
  /// initializer), evaluates the ops with the reference interpreter and
  /// makes its outputs constants, erasing the ops; `cachedBefore` names the
  /// inputs that had a value before the conversion. False, changing
  /// nothing, when the node is not folded (OnnxFold.cpp).
  bool foldConverted(const onnx::NodeProto &node, mlir::Operation *before,
                     const llvm::StringSet<> &cachedBefore);

  /// The opset of the default ONNX domain.
  int64_t opset() const { return defaultOpset; }
  /// ImportOptions::training.
  bool training() const { return forTraining; }

  mlir::MLIRContext &context;
  mlir::OpBuilder builder;

private:
  mlir::LogicalResult checkSupported();
  mlir::LogicalResult addInputs(const ImportOptions &options,
                                mlir::func::FuncOp &function);
  mlir::Value weightOf(const onnx::TensorProto &tensor,
                       const onnx::NodeProto &user);
  mlir::Value constantOf(const onnx::TensorProto &tensor,
                         const onnx::NodeProto &user);

  std::string path;
  const onnx::ModelProto &model;
  int64_t defaultOpset = 1;
  bool forTraining = false;
  mlir::ModuleOp module;
  llvm::StringMap<mlir::Value> values;
  /// Folded integer constants (shapes) with elements that are the size of
  /// a dynamic dimension (docs/dynamic.md): per element, "" or the
  /// dimension's name. The constant holds the dimension's max there; only
  /// data movement (Gather, Concat, Unsqueeze, Slice, ...) may fold such a
  /// value, and only a Reshape may read it, where it keeps the dimension.
  llvm::StringMap<llvm::SmallVector<std::string>> symbolicInts;
  /// addInputs: the ONNX dimension names (dim_param) --input-shape gives
  /// a size (`named`: size and input) or a dynamic dimension
  /// (`dynamicNames`); an error where it gives one name both, or two sizes.
  mlir::LogicalResult
  namedDimensions(const ImportOptions &options,
                  llvm::StringMap<std::pair<int64_t, std::string>> &named,
                  llvm::StringMap<std::string> &dynamicNames);
  /// addInputs: `in`'s shape from --input-shape, checked against the
  /// model's; the axes it names as dynamic dimensions go to `inputDims`.
  mlir::LogicalResult givenShape(const ImportOptions &options,
                                 const onnx::ValueInfoProto &in,
                                 mlir::Location loc,
                                 llvm::SmallVector<int64_t> &shape,
                                 llvm::SmallVector<std::string> &inputDims,
                                 llvm::StringSet<> &usedDims);
  /// addInputs: an error for each --dim that no input's axis is called.
  mlir::LogicalResult checkDimsUsed(const ImportOptions &options,
                                    const llvm::StringSet<> &usedDims);
  /// tryFold's folds of shape computations on constant inputs `in`.
  std::optional<IntTensor> foldInts(const onnx::NodeProto &n,
                                    const llvm::SmallVector<IntTensor> &in);
  /// tryFold's propagation of symbolicInts through `n` (its fold made a
  /// result: `folded`); false after an error at `n`.
  bool moveSymbols(const onnx::NodeProto &n,
                   const llvm::SmallVector<IntTensor> &in, bool folded);
  /// moveSymbols of Mul and Div: products and exact quotients of sizes.
  bool multiplySymbols(const onnx::NodeProto &n,
                       const llvm::SmallVector<IntTensor> &in, bool folded);
  /// Set by tryFold when it reported an error (a computation on the size
  /// of a dynamic dimension).
  bool foldError = false;

public:
  /// The first dynamic dimension any input of `node` has a symbolic
  /// element of, or "".
  std::string symbolicInput(const onnx::NodeProto &node) const;
  /// A Range from 0 to a dimension's size, or a Slice that ends at one
  /// (positions and positional tables cut to the sequence): a graph.slice
  /// with graph.dims; nullopt for any other node.
  std::optional<mlir::LogicalResult>
  importCutToSize(const onnx::NodeProto &node);
  /// The symbolic elements of the constant `name` (empty: none).
  llvm::ArrayRef<std::string> symbolsOf(const std::string &name) const {
    auto it = symbolicInts.find(name);
    return it == symbolicInts.end() ? llvm::ArrayRef<std::string>()
                                    : llvm::ArrayRef<std::string>(it->second);
  }

private:
  /// The names of the graph's initializers (weights when read as tensors).
  llvm::StringSet<> initializerNames;
  /// Initializers and the values of Constant nodes, by name.
  llvm::StringMap<const onnx::TensorProto *> constants;
  /// Tensors of Constant nodes (kept alive here).
  std::vector<std::unique_ptr<onnx::TensorProto>> ownedConstants;
  llvm::StringMap<mlir::Value> weightRefs;
  std::vector<InitializerData> weights;
};

/// Reads the external data of `model`'s initializers (files in `dir`, the
/// model's folder) into their raw_data; errors at `fileLoc`
/// (OnnxExternalData.cpp).
mlir::LogicalResult loadExternalData(onnx::ModelProto &model,
                                     llvm::StringRef dir,
                                     mlir::Location fileLoc);

/// The MLIR element type of an ONNX TensorProto data type, or null.
mlir::Type elementTypeOf(mlir::MLIRContext &context, int32_t dataType);
/// The data of `tensor` in memory order for its element type; false when
/// the data is missing or of an unsupported kind (`why` says which).
bool tensorBytes(const onnx::TensorProto &tensor,
                 std::vector<unsigned char> &bytes, std::string &why);

} // namespace modelc::onnx_import

#endif // MODELC_COMPILER_IMPORT_ONNX_IMPORTER_H
