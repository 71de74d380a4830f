//===- ParseModel.cpp - reads a model and its argument names --------------===//
//
// MLIR drops SSA names when it parses; the names of entry-point arguments
// are the model's input names, so they are read from the source text.
//
//===----------------------------------------------------------------------===//

#include "tools/modelc/ParseModel.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/AsmParser/AsmParserState.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Verifier.h"

using namespace mlir;

OwningOpRef<ModuleOp> modelc::driver::parseModel(llvm::SourceMgr &sourceMgr,
                                                 MLIRContext &context,
                                                 ArgumentNames &argumentNames) {
  AsmParserState asmState;
  Block block;
  ParserConfig config(&context);
  if (failed(parseAsmSourceFile(sourceMgr, &block, config, &asmState)))
    return nullptr;
  OwningOpRef<ModuleOp> module;
  if (llvm::hasSingleElement(block) && isa<ModuleOp>(block.front())) {
    module = cast<ModuleOp>(block.front());
    module.get()->remove();
  } else {
    StringRef file = sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID())
                         ->getBufferIdentifier();
    module = ModuleOp::create(FileLineColLoc::get(&context, file, 0, 0));
    module->getBody()->getOperations().splice(module->getBody()->begin(),
                                              block.getOperations());
  }
  if (failed(verify(*module)))
    return nullptr;
  for (auto function : module->getOps<func::FuncOp>()) {
    if (function.isExternal())
      continue;
    const AsmParserState::BlockDefinition *def =
        asmState.getBlockDef(&function.getBody().front());
    std::vector<std::string> names;
    if (def)
      for (const AsmParserState::SMDefinition &arg : def->arguments) {
        StringRef text(arg.loc.Start.getPointer(),
                       arg.loc.End.getPointer() - arg.loc.Start.getPointer());
        names.push_back(text.drop_front(text.starts_with("%") ? 1 : 0).str());
      }
    argumentNames[function.getSymName()] = std::move(names);
  }
  return module;
}

void modelc::driver::nameArguments(ModuleOp module,
                                   const ArgumentNames &argumentNames) {
  Builder builder(module.getContext());
  for (auto function : module.getOps<func::FuncOp>()) {
    auto names = argumentNames.find(function.getSymName());
    if (names == argumentNames.end())
      continue;
    for (unsigned i = 0;
         i < function.getNumArguments() && i < names->second.size(); ++i)
      if (!function.getArgAttr(i, "graph.name"))
        function.setArgAttr(i, "graph.name",
                            builder.getStringAttr(names->second[i]));
  }
}
