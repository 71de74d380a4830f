//===- GraphInterfaces.td - what passes ask a graph op ------*- tablegen -*-===//
//
// The questions the compiler's analyses and passes ask of an op, answered
// by the op itself (next to its verifier and type inference), so that a new
// op brings its answers along and no pass keeps a list of ops. An op that
// does not implement an interface gets the safe answer: see each one.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_GRAPH_INTERFACES_TD
#define MODELC_GRAPH_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Graph_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::modelc::graph";
  let description = [{
    The arithmetic an op performs, for the cost model
    (compiler/Analysis/CostModel.cpp), which adds the bytes the op reads and
    writes itself. An op without this interface performs one operation per
    result element, eight with the `Transcendental` trait.
  }];
  let methods = [
    InterfaceMethod<[{
      Arithmetic operations of one execution; a multiply-add counts two.
    }], "double", "getFlops">
  ];
}

def Graph_BatchSplitOpInterface : OpInterface<"BatchSplitOpInterface"> {
  let cppNamespace = "::modelc::graph";
  let description = [{
    Whether an op may run on each replica's share of the batch when
    modelc-data-parallel splits dimension 0 across accelerators (the pass
    already checks that the result keeps the batch as dimension 0). An op
    declaring the interface without overriding `whyNotSplit` works on each
    sample alone; an op without the interface is never split, unless it is
    elementwise.
  }];
  let methods = [
    InterfaceMethod<[{
      Why the op cannot be split, given which operands carry the batch as
      dimension 0 (`isBatched`) and the batch size; empty when it can.
    }], "std::string", "whyNotSplit",
    (ins "::llvm::function_ref<bool(::mlir::Value)>":$isBatched,
         "int64_t":$batch), [{}], [{ return {}; }]>
  ];
}

def Graph_SymbolicShapeOpInterface : OpInterface<"SymbolicShapeOpInterface"> {
  let cppNamespace = "::modelc::graph";
  let description = [{
    How the op's result size follows from its operands' when some sizes
    are dynamic dimensions (docs/dynamic.md; SymbolicShape.h): each axis a
    product of a constant and dimensions. inferSymbolicShapes asks it of
    an op that reads a value with dimensions; an elementwise op needs no
    rule of its own (numpy broadcasting). An op without either carries a
    dimension 0 to its result's dimension 0 only, and only where the
    dimension keeps samples apart (BatchSplitOpInterface).
  }];
  let methods = [
    InterfaceMethod<[{
      The result's symbolic shape given each operand's (static operands as
      their sizes): "" and `result` set, or why the op cannot take these
      dimensions (a contracted or normalized axis that is dynamic, sizes
      that cannot be proved equal).
    }], "std::string", "inferSymbolicShape",
    (ins "::llvm::ArrayRef<::modelc::graph::SymShape>":$operands,
         "::llvm::function_ref<int64_t(::mlir::StringAttr)>":$size,
         "::modelc::graph::SymShape &":$result)>
  ];
}

def Graph_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::modelc::graph";
  let description = [{
    The op's reverse-mode derivative, for modelc-differentiate
    (compiler/Transforms/Differentiate.cpp), which walks a loss's graph
    backwards and asks each op on the way for the gradients of its operands
    given those of its results. The rule builds graph ops (through
    `GradientBuilder`, at the op's location), so the backward is an
    ordinary graph that placement, fusion, memory planning and scheduling
    treat like any other. An op without this interface has no gradient:
    the pass lists every such op on a loss's path in one error.
  }];
  let methods = [
    InterfaceMethod<[{
      Builds the gradient of the loss with respect to each operand, given
      `resultGradients` (one per result, of the result's type), into
      `operandGradients` (one per operand, of the operand's type; null for
      an operand with no gradient, such as integer indices). Fails after
      an error at the op when a case is not supported.
    }], "::llvm::LogicalResult", "buildGradients",
    (ins "::modelc::graph::GradientBuilder &":$builder,
         "::mlir::ArrayRef<::mlir::Value>":$resultGradients,
         "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>
  ];
}

// What an op declares in its trait list: its own getFlops; that it works on
// each sample alone; that it says when it can be split (whyNotSplit).
def Graph_OwnCost : DeclareOpInterfaceMethods<Graph_CostOpInterface>;
def Graph_SplitPerSample : DeclareOpInterfaceMethods<Graph_BatchSplitOpInterface>;
def Graph_OwnGradient : DeclareOpInterfaceMethods<Graph_GradientOpInterface>;
// That it says how its result's symbolic shape follows (inferSymbolicShape).
def Graph_OwnSymbolicShape
    : DeclareOpInterfaceMethods<Graph_SymbolicShapeOpInterface>;
def Graph_SplitWhen
    : DeclareOpInterfaceMethods<Graph_BatchSplitOpInterface, ["whyNotSplit"]>;

#endif // MODELC_GRAPH_INTERFACES_TD
