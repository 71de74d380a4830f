//===- DataParallel.cpp - splits the batch over the accelerators ----------===//

#include "compiler/Target/Target.h"
#include "compiler/Transforms/BatchValues.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Graph/IR/GraphOps.h"
#include "dialects/Graph/IR/SymbolicShape.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

namespace modelc {
#define GEN_PASS_DEF_DATAPARALLELPASS
#define GEN_PASS_DEF_SPLITBATCHPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace modelc

using namespace mlir;
using namespace modelc;
using namespace modelc::graph;

namespace {

/// The batch of `function` (dimension 0 of every input) and the values
/// that carry it, after checking that it splits into `parts` and that every
/// op keeps samples apart; an error at the culprit otherwise.
FailureOr<std::pair<int64_t, llvm::DenseSet<Value>>>
batchedValues(func::FuncOp function, int64_t parts, bool even = true) {
  Block &body = function.getBody().front();
  if (function.getNumArguments() == 0)
    return function.emitError("data parallelism needs inputs to split");
  int64_t batch = -1;
  for (BlockArgument arg : function.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    int64_t size = type.getRank() ? type.getDimSize(0) : -1;
    if (batch < 0)
      batch = size;
    if (size != batch || size < 0)
      return emitError(arg.getLoc())
             << "cannot split the batch: the inputs of '"
             << function.getSymName()
             << "' do not share a dimension 0 (the batch)";
  }
  if (even && batch % parts != 0)
    return function.emitError("cannot split a batch of ")
           << batch << " over " << parts << " accelerators evenly";

  // Which values carry the batch, and whether every op keeps samples
  // apart.
  llvm::DenseSet<Value> batched(function.getArguments().begin(),
                                function.getArguments().end());
  for (Operation &op : body) {
    if (isa<func::ReturnOp>(op)) {
      for (Value v : op.getOperands())
        if (!batched.contains(v))
          return op.emitError("cannot split the batch: an output does not "
                              "carry it");
      continue;
    }
    if (op.getNumResults() == 0 ||
        llvm::none_of(op.getOperands(),
                      [&](Value v) { return batched.contains(v); }))
      continue;
    std::string reason = mixesSamples(&op, batched, batch);
    if (!reason.empty())
      return op.emitError("cannot split the batch: ") << reason;
    batched.insert(op.getResult(0));
  }

  return std::make_pair(batch, std::move(batched));
}

/// The dynamic dimension at axis 0 of `function`'s arguments (a null
/// attribute when the batch is static); an error when only some have it.
FailureOr<StringAttr> dynamicBatch(func::FuncOp function) {
  StringAttr batch;
  bool first = true;
  for (BlockArgument arg : function.getArguments()) {
    StringAttr name;
    if (auto dims = function.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                         kDimsAttrName);
        dims && !dims.empty())
      if (auto text = dyn_cast<StringAttr>(dims[0]); text && !text.empty())
        name = text;
    if (!first && name != batch)
      return emitError(arg.getLoc())
             << "cannot split the batch: the inputs of '"
             << function.getSymName()
             << "' do not share a dynamic dimension 0 ('"
             << (batch ? batch.getValue() : "") << "' and '"
             << (name ? name.getValue() : "") << "')";
    batch = name;
    first = false;
  }
  return batch;
}

/// The smallest size of dimension `name` a run of this plan sees: the
/// graph.dim's min, or the size regime's (device.regime_min).
int64_t smallestSize(ModuleOp module, StringAttr name) {
  int64_t min = 1;
  if (auto dim = SymbolTable::lookupSymbolIn(module, name))
    if (auto decl = dyn_cast<DimOp>(dim))
      min = decl.getMin();
  if (auto regime = module->getAttrOfType<DictionaryAttr>("device.regime_min"))
    if (auto at = regime.getAs<IntegerAttr>(name))
      min = std::max(min, at.getInt());
  return min;
}

/// `dims` (a reshape's graph.dims) with `from` renamed `to` in each size.
ArrayAttr renameDim(ArrayAttr dims, StringAttr from, StringAttr to) {
  Builder b(dims.getContext());
  SmallVector<Attribute> renamed;
  for (Attribute a : dims) {
    auto text = cast<StringAttr>(a);
    std::optional<SymDim> d = SymDim::parse(b.getContext(), text.getValue());
    if (!d || text.empty()) {
      renamed.push_back(a);
      continue;
    }
    SymDim out = SymDim::of(d->coef);
    for (StringAttr name : d->dims)
      out = out * SymDim::named(name == from ? to : name);
    renamed.push_back(b.getStringAttr(out.str()));
  }
  return b.getArrayAttr(renamed);
}

struct DataParallelPass : modelc::impl::DataParallelPassBase<DataParallelPass> {
  using DataParallelPassBase::DataParallelPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<TargetDescription> t = loadTarget(target, module);
    if (!t)
      return signalPassFailure();
    std::vector<std::string> accelerators;
    for (const DeviceDesc &d : t->devices)
      if (!d.isHost())
        accelerators.push_back(d.name());
    if (accelerators.empty()) {
      module.emitError("data parallelism needs accelerators; target '")
          << t->name << "' has only the CPU";
      return signalPassFailure();
    }
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && failed(split(function, accelerators)))
        return signalPassFailure();
  }

  LogicalResult split(func::FuncOp function,
                      const std::vector<std::string> &accelerators) {
    int64_t replicas = accelerators.size();
    // An entry point without ops (it returns its inputs, or nothing) has
    // nothing to replicate: its outputs stay where its inputs are.
    Block &body = function.getBody().front();
    if (llvm::hasSingleElement(body))
      return success();
    FailureOr<StringAttr> dynamic = dynamicBatch(function);
    if (failed(dynamic))
      return failure();
    if (*dynamic)
      return splitDynamic(function, *dynamic, accelerators);
    FailureOr<std::pair<int64_t, llvm::DenseSet<Value>>> found =
        batchedValues(function, replicas);
    if (failed(found))
      return failure();
    int64_t part = found->first / replicas;
    llvm::DenseSet<Value> &batched = found->second;
    // Each replica's inputs: its slice of rows (a view).
    return replicate(
        function, accelerators,
        [&](OpBuilder &builder, BlockArgument arg, int64_t r) -> Value {
          return SliceOp::create(builder, arg.getLoc(), arg,
                                 builder.getDenseI64ArrayAttr({r * part}),
                                 builder.getDenseI64ArrayAttr({(r + 1) * part}),
                                 builder.getDenseI64ArrayAttr({0}),
                                 DenseI64ArrayAttr());
        },
        [&](Operation &op, Operation *clone, int64_t) {
          if (op.getNumResults() != 0 && batched.contains(op.getResult(0)))
            setBatchSize(clone, part);
        });
  }

  /// A dynamic batch `dim`: replica r runs on graph.batch_part r of the
  /// inputs, its values' dimension 0 the dimension `dim[r/N]`.
  LogicalResult splitDynamic(func::FuncOp function, StringAttr dim,
                             const std::vector<std::string> &accelerators) {
    int64_t replicas = accelerators.size();
    ModuleOp module = function->getParentOfType<ModuleOp>();
    int64_t min = smallestSize(module, dim);
    if (min < replicas)
      return function.emitError("cannot split the dynamic batch '")
             << dim.getValue() << "' over " << replicas
             << " accelerators: a batch of " << min
             << " (the smallest it takes) leaves an accelerator without a "
                "sample (size regimes run the small sizes unsplit: modelc "
                "--regimes=2 or more; or a range that starts at "
             << replicas << " or more)";
    // A value cut to the batch's size from something without it (the
    // positions 0..batch-1) would restart at 0 in every replica.
    llvm::DenseSet<Value> varies = valuesOfTheBatch(function);
    for (Operation &op : function.getBody().front().without_terminator())
      if (auto dims = op.getAttrOfType<ArrayAttr>(kDimsAttrName);
          dims && op.getNumResults() == 1 &&
          !varies.contains(op.getResult(0)) &&
          llvm::any_of(dims, [&](Attribute a) {
            std::optional<SymDim> d =
                SymDim::parse(op.getContext(), cast<StringAttr>(a).getValue());
            return d && llvm::is_contained(d->dims, dim);
          }))
        return op.emitError("cannot split the dynamic batch '")
               << dim.getValue()
               << "': this op cuts a value without it to its size (positions "
                  "over the batch would restart in every replica); not "
                  "supported yet";
    FailureOr<std::pair<int64_t, llvm::DenseSet<Value>>> found =
        batchedValues(function, replicas, /*even=*/false);
    if (failed(found))
      return failure();
    int64_t max = found->first;
    llvm::DenseSet<Value> &batched = found->second;
    // The batch must stay dimension 0, whole: each replica's values then
    // hold its part there.
    FailureOr<SymbolicShapes> shapes = inferSymbolicShapes(function);
    if (failed(shapes))
      return failure();
    for (Operation &op : function.getBody().front().without_terminator()) {
      for (Value result : op.getResults())
        if (const SymShape *shape = shapes->lookup(result))
          for (auto [axis, d] : llvm::enumerate(*shape))
            if (llvm::is_contained(d.dims, dim) &&
                (axis != 0 || d != SymDim::named(dim)))
              return op.emitError("cannot split the dynamic batch '")
                     << dim.getValue() << "': this op's result is "
                     << describe(*shape)
                     << ", the batch other than as dimension 0 (not "
                        "supported yet)";
    }
    return replicate(
        function, accelerators,
        [&](OpBuilder &builder, BlockArgument arg, int64_t r) -> Value {
          return BatchPartOp::create(builder, arg.getLoc(), arg, r, replicas);
        },
        [&](Operation &op, Operation *clone, int64_t r) {
          if (op.getNumResults() != 0 && batched.contains(op.getResult(0)))
            setBatchSize(clone, partSize(max, r, replicas));
          if (auto dims = clone->getAttrOfType<ArrayAttr>(kDimsAttrName))
            clone->setAttr(
                kDimsAttrName,
                renameDim(
                    dims, dim,
                    StringAttr::get(clone->getContext(),
                                    dimPartName(dim.getValue(), r, replicas))));
        });
  }

  /// Replicates `function`'s body once per accelerator: replica r's inputs
  /// are `part(builder, arg, r)` (on the host), its ops clones pinned to
  /// accelerator r and adjusted by `adjust(original, clone, r)`; the
  /// outputs' parts are concatenated on the host, and the original body is
  /// erased.
  LogicalResult
  replicate(func::FuncOp function, const std::vector<std::string> &accelerators,
            function_ref<Value(OpBuilder &, BlockArgument, int64_t)> part,
            function_ref<void(Operation &, Operation *, int64_t)> adjust) {
    Block &body = function.getBody().front();
    SmallVector<Operation *> original;
    for (Operation &op : body.without_terminator())
      original.push_back(&op);
    OpBuilder builder(function.getContext());
    auto returnOp = cast<func::ReturnOp>(body.getTerminator());
    builder.setInsertionPoint(returnOp);
    StringAttr host = builder.getStringAttr("cpu");
    SmallVector<SmallVector<Value>> outputs(returnOp.getNumOperands());
    for (int64_t r = 0; r < static_cast<int64_t>(accelerators.size()); ++r) {
      IRMapping mapping;
      StringAttr device = builder.getStringAttr(accelerators[r]);
      for (BlockArgument arg : function.getArguments()) {
        Value input = part(builder, arg, r);
        input.getDefiningOp()->setAttr(kDeviceAttrName, host);
        mapping.map(arg, input);
      }
      for (Operation *op : original) {
        Operation *clone = builder.clone(*op, mapping);
        adjust(*op, clone, r);
        clone->setAttr(kDeviceAttrName, device);
      }
      for (auto [i, v] : llvm::enumerate(returnOp.getOperands()))
        outputs[i].push_back(mapping.lookup(v));
    }
    SmallVector<Value> results;
    for (const SmallVector<Value> &parts : outputs) {
      auto concat = ConcatOp::create(builder, returnOp.getLoc(), parts,
                                     builder.getI64IntegerAttr(0));
      concat->setAttr(kDeviceAttrName, host);
      results.push_back(concat.getResult());
    }
    // The original body is dead now: replace the outputs and erase it.
    returnOp->setOperands(results);
    for (Operation *op : llvm::reverse(original)) {
      if (!op->use_empty())
        return op->emitError("internal error: a replicated op is still used");
      op->erase();
    }
    return success();
  }
};

/// Data-parallel training, first step: every entry point is rewritten in
/// place to take one replica's part of the batch (modelc-replicate later
/// runs it once per replica).
struct SplitBatchPass : modelc::impl::SplitBatchPassBase<SplitBatchPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (parts < 1) {
      module.emitError("modelc-split-batch: parts must be at least 1");
      return signalPassFailure();
    }
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal() && failed(split(function)))
        return signalPassFailure();
  }

  LogicalResult split(func::FuncOp function) {
    Block &body = function.getBody().front();
    if (llvm::hasSingleElement(body) || parts == 1)
      return success();
    FailureOr<std::pair<int64_t, llvm::DenseSet<Value>>> found =
        batchedValues(function, parts);
    if (failed(found))
      return failure();
    int64_t part = found->first / parts;
    for (BlockArgument arg : function.getArguments()) {
      auto type = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> shape(type.getShape());
      shape[0] = part;
      arg.setType(RankedTensorType::get(shape, type.getElementType()));
    }
    for (Operation &op : body.without_terminator())
      if (op.getNumResults() != 0 && found->second.contains(op.getResult(0)))
        setBatchSize(&op, part);
    function.setType(
        FunctionType::get(function.getContext(), body.getArgumentTypes(),
                          body.getTerminator()->getOperandTypes()));
    return success();
  }
};

} // namespace
