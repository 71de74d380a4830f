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

#include <algorithm>
#include <cctype>

using namespace mlir;

/// MLIR's parser descends recursively into every nested region, attribute
/// and type, so thousands of nested `module {`, `[` or `tensor<` overflow
/// its stack (a crash, not an error); so do thousands of unary minus signs
/// in an affine expression, which nest without brackets. The source is
/// scanned first: brackets nested deeper than kMaxNesting, or a run of more
/// minus signs, outside strings and comments, are an error where the input
/// goes too deep. Real models nest a few levels.
static bool isIdentifierChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' ||
         c == '.';
}

/// Whether `word` ends right before position `at` of `text` and is not the
/// end of a longer identifier.
static bool isWord(StringRef text, size_t at, StringRef word) {
  if (at < word.size() || text.substr(at - word.size(), word.size()) != word)
    return false;
  size_t start = at - word.size();
  return start == 0 || !isIdentifierChar(text[start - 1]);
}

LogicalResult modelc::driver::checkNesting(llvm::SourceMgr &sourceMgr,
                                           MLIRContext &context) {
  constexpr int kMaxNesting = 256;
  const llvm::MemoryBuffer *buffer =
      sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
  StringRef text = buffer->getBuffer();
  auto tooDeep = [&](size_t at, const char *what) {
    auto [line, column] = sourceMgr.getLineAndColumn(
        llvm::SMLoc::getFromPointer(text.data() + at));
    return emitError(FileLineColLoc::get(
               &context, buffer->getBufferIdentifier(), line, column))
           << what << " nested more than " << kMaxNesting
           << " levels deep; modelc does not parse such input";
  };
  int depth = 0, minuses = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '-') {
      if (++minuses > kMaxNesting)
        return tooDeep(i, "minus signs");
      continue;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
      minuses = 0;
    if (c == '"') {
      // A string literal, with backslash escapes.
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == StringRef::npos)
        break;
    } else if (c == '(' || c == '[' || c == '{' || c == '<') {
      if (++depth > kMaxNesting)
        return tooDeep(i, "brackets");
      // MLIR's parser crashes on a dense array of `index` (it asks the
      // element type for a bit width it does not have).
      if (c == '<' && isWord(text, i, "array")) {
        size_t j = text.find_first_not_of(" \t\r\n", i + 1);
        if (j != StringRef::npos && text.substr(j).starts_with("index") &&
            (j + 5 == text.size() || !isIdentifierChar(text[j + 5]))) {
          auto [line, column] = sourceMgr.getLineAndColumn(
              llvm::SMLoc::getFromPointer(text.data() + j));
          return emitError(FileLineColLoc::get(
                     &context, buffer->getBufferIdentifier(), line, column))
                 << "a dense array of 'index' is not supported; write "
                    "array<i64: ...>";
        }
      }
    } else if (c == ')' || c == ']' || c == '}' ||
               (c == '>' && (i == 0 || text[i - 1] != '-') &&
                (i + 1 == text.size() || text[i + 1] != '='))) {
      // Not the `>` of `->` or `>=`. Unbalanced input is the parser's to
      // report.
      depth = std::max(0, depth - 1);
    }
  }
  return success();
}

OwningOpRef<ModuleOp> modelc::driver::parseModel(llvm::SourceMgr &sourceMgr,
                                                 MLIRContext &context,
                                                 ArgumentNames &argumentNames) {
  if (failed(checkNesting(sourceMgr, context)))
    return nullptr;
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
