//===- CheckDynamicDims.cpp - follows dynamic dimensions to the outputs ---===//

#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/IR/SymbolicShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <functional>

namespace modelc {
#define GEN_PASS_DEF_CHECKDYNAMICDIMSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

struct CheckDynamicDimsPass
    : modelc::impl::CheckDynamicDimsPassBase<CheckDynamicDimsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && failed(check(function, symbols)))
        return signalPassFailure();
  }

  LogicalResult check(func::FuncOp function, SymbolTable &symbols) {
    // Where only dimensions 0 flow, an op must keep samples apart, as the
    // data-parallel split requires (the first back ends' guarantee: code
    // for the max is right for any smaller size). Beyond axis 0 the ops'
    // rules alone decide (SymbolicShapeOpInterface).
    auto keepsSamples = [&](Operation *op, const SymDim &dim,
                            function_ref<bool(Value)> carries) {
      llvm::DenseSet<Value> batched;
      for (Value v : op->getOperands())
        if (carries(v))
          batched.insert(v);
      std::function<int64_t(StringAttr)> size = [&](StringAttr d) {
        if (std::optional<DimPart> part = parseDimPart(d.getValue()))
          return partSize(size(StringAttr::get(d.getContext(), part->base)),
                          part->index, part->parts);
        DimOp decl = symbols.lookup<DimOp>(d.getValue());
        return decl ? static_cast<int64_t>(decl.getMax()) : int64_t(0);
      };
      return mixesSamples(op, batched, dim.eval(size));
    };
    FailureOr<SymbolicShapes> shapes = inferSymbolicShapes(
        function, /*emitErrors=*/true, LeadingCheck(keepsSamples));
    if (failed(shapes))
      return failure();
    if (shapes->shapes.empty())
      return success();
    Builder b(&getContext());
    // Each output axis names its dimension; a reshape its grouping, so
    // that it stays exact at any size (specializeDims).
    auto dimsAttr = [&](const SymShape &shape) {
      SmallVector<Attribute> dims;
      for (const SymDim &d : shape)
        dims.push_back(b.getStringAttr(d.isStatic() ? "" : d.str()));
      return b.getArrayAttr(dims);
    };
    function.walk([&](ReshapeOp reshape) {
      if (const SymShape *shape = shapes->lookup(reshape.getResult()))
        reshape->setAttr(kDimsAttrName, dimsAttr(*shape));
    });
    auto ret = cast<func::ReturnOp>(function.getBody().front().getTerminator());
    for (auto [index, v] : llvm::enumerate(ret.getOperands())) {
      const SymShape *shape = shapes->lookup(v);
      if (!shape)
        continue;
      for (auto [axis, dim] : llvm::enumerate(*shape))
        if (!dim.isStatic() && (dim.coef != 1 || dim.dims.size() != 1))
          return ret.emitError("result #")
                 << index << " of '" << function.getSymName() << "' has size "
                 << dim.str() << " at axis " << axis
                 << "; an output's dynamic axis must be one dimension; not "
                    "supported yet";
      function.setResultAttr(index, kDimsAttrName, dimsAttr(*shape));
    }
    return success();
  }
};

} // namespace
