//===- Assign.cpp - writing a weight back in an entry point ---------------===//

#include "compiler/Transforms/Assign.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "llvm/ADT/SetVector.h"

#include <functional>

using namespace mlir;
using namespace modelc::graph;

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
