//===- HostParts.h - the host C++ as several translation units --*- C++ -*-===//
//
// A long CPU entry point is printed as functions of bounded size, its
// parts (HostPrinter.cpp). This file cuts the printed text into files: the
// parts go to part files, balanced by their number of ops, so that the C++
// compiler handles them in parallel; the rest stays in the main file.
//
//===----------------------------------------------------------------------===//

#ifndef MODELC_COMPILER_CODEGEN_HOSTPARTS_H
#define MODELC_COMPILER_CODEGEN_HOSTPARTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace modelc::codegen {

/// A half-open range [first, second) of a printed text.
using TextRange = std::pair<size_t, size_t>;

/// One part of an entry point: a function `modelc_parts::<name>` whose
/// definition is a range of the functions text.
struct HostPart {
  std::string name;
  TextRange text;
  /// The ranges of the globals text that the part refers to: those printed
  /// while it was, and the constants it reads from earlier parts.
  std::vector<TextRange> globals;
  /// Ops that print code (kernel calls, loops): what the compiler works on.
  unsigned ops = 0;
};

/// The pieces of a printed model, and where its parts are in them.
struct PrintedHost {
  std::string prelude;   ///< includes, the same in every file
  std::string embedded;  ///< .incbin sections: the main file alone
  std::string globals;   ///< constants and shape arrays
  std::string functions; ///< entry points (and their parts)
  std::string tail;      ///< GPU kernel names, descriptor, exported symbol
  std::vector<HostPart> parts;
};

/// The main file and up to `files` part files (none when the model has no
/// parts or `files` is at most 1: then the main file is the whole model, as
/// one translation unit).
void assembleHostSources(const PrintedHost &printed, unsigned files,
                         std::string &main, std::vector<std::string> &parts);

} // namespace modelc::codegen

#endif // MODELC_COMPILER_CODEGEN_HOSTPARTS_H
