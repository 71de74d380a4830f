//===- GraphBase.td - the graph dialect definition ---------*- tablegen -*-===//
//
// The `graph` dialect is the language models are written in: device-agnostic
// tensor ops with ONNX/PyTorch semantics, module-level weights named by their
// safetensors keys, entry points as `func.func`.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_GRAPH_BASE_TD
#define MODELC_GRAPH_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::modelc::graph";
  let summary = "Device-agnostic tensor ops in which models are written.";
  let description = [{
    Ops follow ONNX/PyTorch semantics, with numpy broadcasting where those
    have it. Shapes are static; every op infers its result type, so a model
    spells out only operand types. Element types: `f32`, `f16`, `bf16`,
    `i32`, `i64`, `i1`. Any op may carry a device pin, `{device = "cuda:1"}`.
  }];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let dependentDialects = ["::modelc::device::DeviceDialect"];
  let extraClassDeclaration = [{
    /// An entry point argument's default value (a dense constant of the
    /// argument's type): a run may leave the input out (train_step's `lr`).
    static constexpr ::llvm::StringLiteral kDefaultAttrName = "graph.default";
    /// On an op of a training step (modelc-shard-optimizer-state): only the
    /// rank that owns this shard of the optimizer state (the value mod the
    /// number of ranks) runs the op; its results are not defined elsewhere.
    static constexpr ::llvm::StringLiteral kShardAttrName = "graph.shard";
  }];
  let hasOperationAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

// Element types: f32, f16, bf16 and f64; signless i8, i16, i32 and i64
// (signed); unsigned ui8, ui16, ui32 and ui64; i1 (bool). Which devices
// have kernels for which types is the backends' business (Backends.h):
// f64 and the 8/16-bit and unsigned integers run on the CPU and sim
// devices.
def Graph_Tensor : RankedTensorOf<[F32, F16, BF16, F64, I8, I16, I32, I64,
                                   UI8, UI16, UI32, UI64, I1]>;
def Graph_NumericTensor : RankedTensorOf<[F32, F16, BF16, F64, I8, I16, I32,
                                          I64, UI8, UI16, UI32, UI64]>;
def Graph_FloatTensor : RankedTensorOf<[F32, F16, BF16, F64]>;
def Graph_IndexTensor : RankedTensorOf<[I32, I64]>;
def Graph_BoolTensor : RankedTensorOf<[I1]>;
def Graph_ElementType : AnyTypeOf<[F32, F16, BF16, F64, I8, I16, I32, I64,
                                   UI8, UI16, UI32, UI64, I1]>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Graph_ComparePredicate : I32EnumAttr<"ComparePredicate",
    "comparison predicate", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::modelc::graph";
}

def Graph_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU approximation", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::modelc::graph";
}

def Graph_Reduction : I32EnumAttr<"Reduction", "loss reduction", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"sum", 2>]> {
  let cppNamespace = "::modelc::graph";
}

def Graph_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how a scatter combines an update with the value it lands on", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"add", 1>,
    I32EnumAttrCase<"mul", 2>, I32EnumAttrCase<"max", 3>,
    I32EnumAttrCase<"min", 4>]> {
  let cppNamespace = "::modelc::graph";
}

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

// Every graph op: static shapes of supported element types, and a valid
// `device` pin when one is given.
def Graph_GraphOpTrait : NativeOpTrait<"GraphOpTrait"> {
  let cppNamespace = "::modelc::graph";
}

// Elementwise with numpy broadcasting: element i of the result reads only the
// element of each operand that broadcasts to i. Such ops may share one loop
// (`sched.fused`, built by modelc-fuse-elementwise).
def Graph_Elementwise : NativeOpTrait<"Elementwise"> {
  let cppNamespace = "::modelc::graph";
}

// Costs several multiply-adds per element (exp, log, tanh, erf, ...): the
// cost model's default for ops without Graph_CostOpInterface.
def Graph_Transcendental : NativeOpTrait<"Transcendental"> {
  let cppNamespace = "::modelc::graph";
}

// InferTypeOpAdaptor for ops with attributes. The parser infers result types
// before it builds the op: attributes from the attribute dictionary are still
// in `attributes` and default values are not filled in yet. The wrapper
// gathers both into a copy of the properties first.
def Graph_InferTypeFromProperties : TraitList<[
  DeclareOpInterfaceMethods<InferTypeOpInterface>,
  NativeOpTrait<"InferTypeOpAdaptor", [], [{
    static ::llvm::LogicalResult
    inferReturnTypes(::mlir::MLIRContext *context,
                     std::optional<::mlir::Location> location, Adaptor adaptor,
                     ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes);
  }], [{
    ::llvm::LogicalResult $cppClass::inferReturnTypes(
        ::mlir::MLIRContext *context, std::optional<::mlir::Location> location,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attributes,
        ::mlir::OpaqueProperties properties, ::mlir::RegionRange regions,
        ::llvm::SmallVectorImpl<::mlir::Type> &inferredReturnTypes) {
      auto where = [&] {
        return ::mlir::emitError(
            location ? *location : ::mlir::UnknownLoc::get(context));
      };
      // A misspelled attribute before the type it changes.
      if (attributes &&
          ::mlir::failed(::modelc::graph::detail::checkAttributeNames(
              ::mlir::OperationName(getOperationName(), context),
              attributes.getValue(), where)))
        return ::mlir::failure();
      Properties complete =
          properties ? *properties.as<Properties *>() : Properties{};
      if (attributes &&
          ::mlir::failed(setPropertiesFromAttr(complete, attributes, [&] {
            return ::mlir::emitError(
                location ? *location : ::mlir::UnknownLoc::get(context));
          })))
        return ::mlir::failure();
      populateDefaultProperties(
          ::mlir::OperationName(getOperationName(), context), complete);
      $cppClass::Adaptor adaptor(operands, attributes, complete, regions);
      return $cppClass::inferReturnTypes(context, location, adaptor,
                                         inferredReturnTypes);
    }
  }]>
]>;

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, !listconcat(traits, [Graph_GraphOpTrait])>;

#endif // MODELC_GRAPH_BASE_TD
