//===- Assign.cpp - writing a weight back in an entry point ---------------===//

#include "compiler/Transforms/Assign.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace modelc::graph;

FailureOr<WeightOp> modelc::declareTrainingState(ModuleOp module,
                                                 StringRef name,
                                                 RankedTensorType type,
                                                 StringRef what) {
  if (Operation *existing = module.lookupSymbol(name)) {
    auto weight = dyn_cast<WeightOp>(existing);
    if (!weight || weight.getTensorType() != type || !weight.getZeros())
      return existing->emitError("'@")
             << name << "' is the name of " << what << " (" << type << ")";
    return weight;
  }
  OpBuilder builder(module.getContext());
  WeightOp last;
  for (WeightOp w : module.getOps<WeightOp>())
    last = w;
  if (last)
    builder.setInsertionPointAfter(last);
  else
    builder.setInsertionPointToStart(module.getBody());
  return WeightOp::create(builder, module.getLoc(), builder.getStringAttr(name),
                          TypeAttr::get(type), TypeAttr(),
                          /*frozen=*/builder.getUnitAttr(),
                          /*zeros=*/builder.getUnitAttr(),
                          /*writable=*/builder.getUnitAttr(),
                          /*shard=*/IntegerAttr());
}

void modelc::buildAssign(OpBuilder &builder, func::FuncOp function,
                         WeightOp weight, Value value) {
  weight.setWritable(true);
  SetVector<Operation *> ancestors;
  BackwardSliceOptions options;
  options.inclusive = true;
  (void)getBackwardSlice(value, &ancestors, options);
  // The readers of the weight's memory: users of its value, and through
  // views (a reshape shares the memory), their users.
  SetVector<Value> after;
  std::function<void(Value)> addReaders = [&](Value v) {
    for (Operation *user : v.getUsers()) {
      if (ancestors.contains(user) || user->getNumResults() != 1)
        continue;
      after.insert(user->getResult(0));
      if (getViewOffset(user))
        addReaders(user->getResult(0));
    }
  };
  function.walk([&](WeightRefOp ref) {
    if (ref.getName() == weight.getSymName())
      addReaders(ref.getResult());
  });
  AssignOp::create(builder, value.getLoc(),
                   FlatSymbolRefAttr::get(weight.getSymNameAttr()), value,
                   after.getArrayRef());
}
