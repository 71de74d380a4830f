//===- OnnxImport.h - an ONNX model as a graph-dialect module ---*- C++ -*-===//
//
// Reads a .onnx file (libonnx's protobuf classes and checker) and builds the
// graph dialect: one `func.func` named after the ONNX graph's entry, its
// inputs and outputs named as in the file (`graph.name`), one `graph.weight`
// per initializer a tensor operand reads, with the initializers' data kept
// for the weight blob. Every op carries a location naming its node,
// `model.onnx:node 'Conv_12'`. Anything not supported is an error that says
// so: every unsupported op type at once, with its count and first node.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_IMPORT_ONNX_ONNXIMPORT_H
#define MODELC_COMPILER_IMPORT_ONNX_ONNXIMPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

#include <optional>
#include <string>
#include <vector>

namespace modelc::onnx_import {

struct ImportOptions {
  /// Shapes for inputs with dynamic dimensions, by input name
  /// (--input-shape NAME=1x3x224x224).
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Axes of those shapes given as a dynamic dimension's name
  /// (--input-shape x=batchx3x224x224): per input, per axis the name or "";
  /// the axis is held at that dimension's max (its size in inputShapes).
  llvm::StringMap<llvm::SmallVector<std::string>> inputShapeDims;
  /// The model is compiled for training (modelc --train): a Dropout in
  /// training mode becomes a graph.dropout that drops in the trained
  /// entry point. Otherwise (inference) one with a ratio above 0 is
  /// refused: the compiled entry points would not drop.
  bool training = false;
  /// Dynamic dimensions by name (--dim NAME=MIN..MAX@OPT): an input axis
  /// whose dim_param is one of them is held at its max and named in the
  /// argument's graph.dims (docs/dynamic.md).
  struct DimRange {
    int64_t min, max, opt;
  };
  llvm::StringMap<DimRange> dims;
};

/// The data of one initializer that became a graph.weight, little-endian,
/// as the weight's declared type lays it out (i1 as one byte).
struct InitializerData {
  std::string name;
  std::vector<unsigned char> bytes;
};

struct ImportedModel {
  mlir::OwningOpRef<mlir::ModuleOp> module;
  /// In the order of the module's graph.weight declarations.
  std::vector<InitializerData> weights;
};

/// Imports `path`; on failure the errors have been emitted (at the file or
/// at a node) and the result is a failure.
mlir::FailureOr<ImportedModel> importOnnxFile(llvm::StringRef path,
                                              mlir::MLIRContext &context,
                                              const ImportOptions &options);

/// Imports a model held in memory (`bytes`, the contents of a .onnx file);
/// `name` stands for the file in locations. External data is read from
/// `dataDir` when given (the model's folder), else refused.
mlir::FailureOr<ImportedModel>
importOnnxBuffer(llvm::StringRef bytes, llvm::StringRef name,
                 mlir::MLIRContext &context, const ImportOptions &options,
                 std::optional<llvm::StringRef> dataDir = std::nullopt);

/// Whether `path` names an ONNX file (by its extension).
bool isOnnxPath(llvm::StringRef path);

} // namespace modelc::onnx_import

#endif // MODELC_COMPILER_IMPORT_ONNX_ONNXIMPORT_H
