//===- VerifyModel.cpp - checks a module is a compilable model ------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace modelc {
#define GEN_PASS_DEF_VERIFYMODELPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;

namespace modelc {
namespace {

/// Checks one boundary type of an entry point.
LogicalResult checkBoundaryType(Type type, Location loc, StringRef what,
                                StringRef function) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return emitError(loc) << what << " of entry point '" << function
                          << "' must be a ranked tensor, got " << type;
  if (!tensor.hasStaticShape())
    return emitError(loc) << what << " of entry point '" << function
                          << "' has a dynamic dimension (" << type
                          << "); the IR holds a dynamic dimension at its "
                             "max, named in graph.dims (docs/dynamic.md)";
  if (!graph::isSupportedElementType(tensor.getElementType()))
    return emitError(loc) << what << " of entry point '" << function
                          << "' has element type " << tensor.getElementType()
                          << "; expected one of " << graph::kElementTypeNames;
  return success();
}

/// Checks argument `index`'s `graph.dims` (one declared name or "" per
/// axis, the argument's size at a named axis the dimension's max).
LogicalResult checkDims(func::FuncOp function, unsigned index,
                        SymbolTable &symbols) {
  Attribute attr = function.getArgAttr(index, graph::kDimsAttrName);
  if (!attr)
    return success();
  Location loc = function.getArgument(index).getLoc();
  auto type = cast<RankedTensorType>(function.getArgument(index).getType());
  auto dims = dyn_cast<ArrayAttr>(attr);
  if (type.getRank() == 0)
    return emitError(loc) << "argument #" << index << " of '"
                          << function.getSymName()
                          << "' is a scalar; graph.dims names the axes of a "
                             "tensor";
  if (!dims || dims.size() != static_cast<size_t>(type.getRank()) ||
      !llvm::all_of(dims, [](Attribute a) { return isa<StringAttr>(a); }))
    return emitError(loc) << "graph.dims of argument #" << index << " of '"
                          << function.getSymName() << "' must be "
                          << type.getRank()
                          << " strings, one per axis: a graph.dim's name or "
                             "\"\" (static)";
  for (auto [axis, a] : llvm::enumerate(dims.getAsRange<StringAttr>())) {
    if (a.getValue().empty())
      continue;
    auto dim = symbols.lookup<graph::DimOp>(a.getValue());
    if (!dim)
      return emitError(loc) << "argument #" << index << " of '"
                            << function.getSymName() << "' names dimension '"
                            << a.getValue() << "', which no graph.dim declares";
    if (type.getDimSize(axis) != static_cast<int64_t>(dim.getMax()))
      return emitError(loc)
             << "argument #" << index << " of '" << function.getSymName()
             << "' has size " << type.getDimSize(axis) << " at axis " << axis
             << ", dimension '" << a.getValue() << "'; the IR holds a dynamic "
             << "dimension at its max, " << dim.getMax();
  }
  return success();
}

LogicalResult verifyEntryPoint(func::FuncOp function, SymbolTable &symbols) {
  StringRef name = function.getSymName();
  if (function.isExternal())
    return function.emitError("entry point '")
           << name << "' has no body; declarations are not supported";
  for (auto [index, argument] : llvm::enumerate(function.getArguments()))
    if (failed(checkBoundaryType(argument.getType(), argument.getLoc(),
                                 "argument #" + std::to_string(index), name)) ||
        failed(checkDims(function, index, symbols)))
      return failure();
  // Results need no check of their own: a result is an argument or the
  // result of a graph op, and both are already checked.
  WalkResult walk = function.walk([&](Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op)) {
      call.emitError("calls between functions are not supported yet; inline '")
          << call.getCallee() << "' into '" << name << "'";
      return WalkResult::interrupt();
    }
    StringRef dialect = op->getName().getDialectNamespace();
    if (op == function.getOperation() || isa<func::ReturnOp>(op) ||
        (op->isRegistered() && (dialect == "graph" || dialect == "device")))
      return WalkResult::advance();
    op->emitError("'") << op->getName()
                       << "' is not an op of a model; models are written "
                          "with graph and device ops (see docs/ir.md)";
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

struct VerifyModelPass : impl::VerifyModelPassBase<VerifyModelPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool ok = true;
    unsigned entryPoints = 0;
    SymbolTable symbols(module);
    for (Operation &op : module.getBody()->getOperations()) {
      if (isa<graph::WeightOp, graph::DimOp>(op))
        continue;
      if (auto function = dyn_cast<func::FuncOp>(op)) {
        ++entryPoints;
        ok &= succeeded(verifyEntryPoint(function, symbols));
        continue;
      }
      op.emitError("'")
          << op.getName()
          << "' is not allowed at the top level of a model; expected "
             "graph.weight and graph.dim declarations and func.func entry "
             "points";
      ok = false;
    }
    if (ok && entryPoints == 0) {
      // The implicit module of a parsed file sits at line 0; point at the
      // file's first line instead.
      Location loc = module.getLoc();
      if (auto file = dyn_cast<FileLineColLoc>(loc);
          file && file.getLine() == 0)
        loc = FileLineColLoc::get(file.getFilename(), 1, 1);
      emitError(loc, "the model has no entry point; define one with "
                     "func.func");
      ok = false;
    }
    if (!ok)
      signalPassFailure();
    markAllAnalysesPreserved();
  }
};

} // namespace
} // namespace modelc
