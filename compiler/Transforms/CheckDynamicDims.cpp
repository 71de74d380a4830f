//===- CheckDynamicDims.cpp - follows dynamic dimensions to the outputs ---===//

#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

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
    // The dimension the arguments name (modelc-verify-model has checked
    // that each name is declared and held at its max).
    StringAttr name;
    llvm::DenseSet<Value> carrying;
    for (auto [index, arg] : llvm::enumerate(function.getArguments())) {
      auto dims = function.getArgAttrOfType<ArrayAttr>(index, kDimsAttrName);
      if (!dims)
        continue;
      for (auto [axis, dim] : llvm::enumerate(dims.getAsRange<StringAttr>())) {
        if (dim.getValue().empty())
          continue;
        if (axis != 0)
          return emitError(arg.getLoc())
                 << "argument #" << index << " of '" << function.getSymName()
                 << "' has dynamic dimension '" << dim.getValue()
                 << "' at axis " << axis
                 << "; only the first axis may be dynamic yet";
        if (name && name != dim)
          return emitError(arg.getLoc())
                 << "argument #" << index << " of '" << function.getSymName()
                 << "' has dynamic dimension '" << dim.getValue()
                 << "' and an earlier one '" << name.getValue()
                 << "'; one dynamic dimension per entry point is supported "
                    "yet";
        name = dim;
        carrying.insert(arg);
      }
    }
    if (!name)
      return success();
    int64_t max = symbols.lookup<DimOp>(name.getValue()).getMax();

    for (Operation &op : function.getBody().front()) {
      bool reads = llvm::any_of(op.getOperands(),
                                [&](Value v) { return carrying.contains(v); });
      if (!reads)
        continue;
      if (auto ret = dyn_cast<func::ReturnOp>(op)) {
        Builder b(&getContext());
        for (auto [index, v] : llvm::enumerate(ret.getOperands())) {
          if (!carrying.contains(v))
            continue;
          SmallVector<Attribute> dims(
              cast<RankedTensorType>(v.getType()).getRank(),
              b.getStringAttr(""));
          dims[0] = name;
          function.setResultAttr(index, kDimsAttrName, b.getArrayAttr(dims));
        }
        continue;
      }
      std::string reason =
          op.getNumResults() != 1
              ? std::string("it does not have exactly one result")
              : mixesSamples(&op, carrying, max);
      if (!reason.empty())
        return op.emitError("dynamic dimension '")
               << name.getValue() << "' (axis 0, up to " << max
               << ") cannot flow through '" << op.getName() << "': " << reason
               << "; not supported yet";
      carrying.insert(op.getResult(0));
    }
    return success();
  }
};

} // namespace
