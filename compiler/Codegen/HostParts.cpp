//===- HostParts.cpp - the host C++ as several translation units ----------===//

#include "compiler/Codegen/HostParts.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace modelc::codegen;

namespace {

/// `ranges` sorted, with overlapping ones merged.
std::vector<TextRange> merge(std::vector<TextRange> ranges) {
  llvm::sort(ranges);
  std::vector<TextRange> merged;
  for (const TextRange &range : ranges) {
    if (range.first == range.second)
      continue;
    if (!merged.empty() && range.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, range.second);
    else
      merged.push_back(range);
  }
  return merged;
}

/// The text of `ranges` (merged), in order.
std::string take(llvm::StringRef text, const std::vector<TextRange> &ranges) {
  std::string out;
  for (const TextRange &range : merge(ranges))
    out += text.slice(range.first, range.second).str();
  return out;
}

/// `text` without `ranges` (merged).
std::string drop(llvm::StringRef text, const std::vector<TextRange> &ranges) {
  std::string out;
  size_t at = 0;
  for (const TextRange &range : merge(ranges)) {
    out += text.slice(at, range.first).str();
    at = range.second;
  }
  out += text.drop_front(at).str();
  return out;
}

} // namespace

void modelc::codegen::assembleHostSources(const PrintedHost &printed,
                                          unsigned files, std::string &main,
                                          std::vector<std::string> &parts) {
  parts.clear();
  if (printed.parts.empty() || files <= 1) {
    main = printed.prelude + printed.embedded + "namespace {\n\n" +
           printed.globals + "\n" + printed.functions + printed.tail;
    return;
  }
  // Consecutive parts to a file, about the same number of ops in each.
  files = std::min<unsigned>(files, printed.parts.size());
  uint64_t totalOps = 0;
  for (const HostPart &part : printed.parts)
    totalOps += std::max(1u, part.ops);
  std::vector<std::vector<TextRange>> fileGlobals(files), fileText(files);
  std::vector<TextRange> partText, partGlobals;
  std::string declarations = "namespace modelc_parts {\n";
  uint64_t before = 0;
  for (const HostPart &part : printed.parts) {
    unsigned file = std::min<uint64_t>(files - 1, before * files / totalOps);
    before += std::max(1u, part.ops);
    llvm::append_range(fileGlobals[file], part.globals);
    fileText[file].push_back(part.text);
    partText.push_back(part.text);
    // Its own globals (the first range) leave the main file; constants of
    // earlier parts are copies.
    partGlobals.push_back(part.globals.front());
    declarations += "int " + part.name + "(modelc_run_ctx *ctx);\n";
  }
  declarations += "} // namespace modelc_parts\n\n";
  for (unsigned file = 0; file < files; ++file)
    parts.push_back(printed.prelude + take(printed.globals, fileGlobals[file]) +
                    "\n" + take(printed.functions, fileText[file]));
  main = printed.prelude + printed.embedded + declarations + "namespace {\n\n" +
         drop(printed.globals, partGlobals) + "\n" +
         drop(printed.functions, partText) + printed.tail;
}
