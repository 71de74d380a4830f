//===- BuildLibrary.cpp - compile generated sources into model.so ---------===//

#include "compiler/Driver/BuildLibrary.h"
#include "compiler/Codegen/HostPrinter.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <thread>

using namespace mlir;

std::vector<std::string> modelc::generatedCodeIncludeDirs() {
  if (const char *dir = std::getenv("MODELC_INCLUDE_DIR"))
    return {dir};
  // An installed modelc: <prefix>/bin/modelc next to <prefix>/include and
  // <prefix>/share/modelc/kernels.
  std::string exe = llvm::sys::fs::getMainExecutable(
      nullptr, reinterpret_cast<void *>(&generatedCodeIncludeDirs));
  if (!exe.empty()) {
    llvm::SmallString<256> prefix(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
    llvm::SmallString<256> include(prefix), kernels(prefix);
    llvm::sys::path::append(include, "include");
    llvm::sys::path::append(kernels, "share", "modelc", "kernels");
    llvm::SmallString<256> abi(include), cpu(kernels);
    llvm::sys::path::append(abi, "modelc", "abi.h");
    llvm::sys::path::append(cpu, "cpu", "kernels.h");
    if (llvm::sys::fs::exists(abi) && llvm::sys::fs::exists(cpu))
      return {std::string(include), std::string(kernels)};
  }
  return {MODELC_RUNTIME_INCLUDE_DIR, MODELC_KERNELS_DIR};
}

std::optional<std::string> modelc::findNvcc(std::string &why) {
  const char *env = std::getenv("MODELC_NVCC");
  if (env && *env) {
    if (llvm::sys::fs::can_execute(env))
      return std::string(env);
    why = "MODELC_NVCC names '" + std::string(env) +
          "', which is not an executable";
    return std::nullopt;
  }
  if (llvm::ErrorOr<std::string> onPath = llvm::sys::findProgramByName("nvcc"))
    return *onPath;
  const char *standard = "/usr/local/cuda/bin/nvcc";
  if (llvm::sys::fs::can_execute(standard))
    return std::string(standard);
  why = "no nvcc on PATH or at /usr/local/cuda/bin/nvcc";
  return std::nullopt;
}

/// Runs `args`, its output to logPath; on failure says `what` failed and
/// shows the start of the log.
static LogicalResult runTool(const std::vector<std::string> &args,
                             StringRef logPath, StringRef what,
                             bool report = true) {
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string logPathText = logPath.str();
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPathText),
                                          StringRef(logPathText)};
  std::string errorMessage;
  int status = llvm::sys::ExecuteAndWait(args.front(), argRefs, std::nullopt,
                                         redirects, 0, 0, &errorMessage);
  if (status == 0)
    return success();
  if (!report)
    return failure();
  llvm::WithColor::error(llvm::errs(), "modelc")
      << what << " failed on the generated code ("
      << (errorMessage.empty() ? "exit status " + std::to_string(status)
                               : errorMessage)
      << "); its output is in " << logPath << "\n";
  if (auto log = llvm::MemoryBuffer::getFile(logPathText)) {
    StringRef text = (*log)->getBuffer();
    llvm::errs() << text.take_front(4000);
  }
  return failure();
}

LogicalResult modelc::buildFatbin(StringRef nvcc, StringRef source,
                                  StringRef output, StringRef logPath) {
  std::vector<std::string> args = {
      nvcc.str(), "-fatbin", "-O3", "-std=c++17", "--expt-relaxed-constexpr",
      "-w",
      // SASS for A100 (sm_80) and H100/H200 (sm_90), PTX for later GPUs.
      "-gencode", "arch=compute_80,code=sm_80", "-gencode",
      "arch=compute_90,code=[sm_90,compute_90]"};
  for (const std::string &dir : modelc::generatedCodeIncludeDirs())
    args.push_back("-I" + dir);
  args.push_back(source.str());
  args.push_back("-o");
  args.push_back(output.str());
  if (failed(runTool(args, logPath, "nvcc")))
    return failure();
  uint64_t size = 0;
  if (llvm::sys::fs::file_size(output, size) || size == 0) {
    llvm::WithColor::error(llvm::errs(), "modelc")
        << "nvcc ('" << nvcc << "') reported success but wrote no fatbin at "
        << output << " (is MODELC_NVCC a real nvcc?)\n";
    return failure();
  }
  return success();
}

/// Runs each command of `commands` (its log next to it), up to `jobs` at a
/// time; fails when any fails.
static LogicalResult runInParallel(
    const std::vector<std::pair<std::vector<std::string>, std::string>>
        &commands,
    unsigned jobs, bool report) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failedAny{false};
  std::mutex reporting;
  auto worker = [&] {
    for (size_t i; (i = next++) < commands.size();) {
      const auto &[args, log] = commands[i];
      SmallVector<StringRef> argRefs(args.begin(), args.end());
      std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                              StringRef(log)};
      std::string errorMessage;
      int status = llvm::sys::ExecuteAndWait(
          args.front(), argRefs, std::nullopt, redirects, 0, 0, &errorMessage);
      if (status == 0)
        continue;
      failedAny = true;
      if (!report)
        continue;
      // One report at a time, as runTool gives it.
      std::lock_guard<std::mutex> lock(reporting);
      llvm::WithColor::error(llvm::errs(), "modelc")
          << "the C++ compiler failed on the generated code ("
          << (errorMessage.empty() ? "exit status " + std::to_string(status)
                                   : errorMessage)
          << "); its output is in " << log << "\n";
      if (auto text = llvm::MemoryBuffer::getFile(log))
        llvm::errs() << (*text)->getBuffer().take_front(4000);
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < std::min<size_t>(jobs, commands.size()); ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread &thread : threads)
    thread.join();
  return failure(failedAny);
}

/// The folder modelc keeps what it can make again in: $MODELC_CACHE_DIR,
/// else $XDG_CACHE_HOME/modelc, else $HOME/.cache/modelc (absolute);
/// empty when none of them is set.
static std::string cacheDir() {
  auto env = [](const char *name) -> std::string {
    const char *value = std::getenv(name);
    return value && *value ? value : "";
  };
  llvm::SmallString<256> dir;
  if (std::string own = env("MODELC_CACHE_DIR"); !own.empty()) {
    dir = own;
  } else {
    if (std::string xdg = env("XDG_CACHE_HOME"); !xdg.empty()) {
      dir = xdg;
    } else if (std::string home = env("HOME"); !home.empty()) {
      dir = home;
      llvm::sys::path::append(dir, ".cache");
    } else {
      return "";
    }
    llvm::sys::path::append(dir, "modelc");
  }
  if (llvm::sys::fs::make_absolute(dir))
    return "";
  return std::string(dir);
}

/// What a precompiled prelude depends on: the compiler (its path, size and
/// time), the flags, the includes, and every file under the include
/// folders (path and bytes). Equal keys, equal precompiled headers.
static std::optional<uint64_t> preludeKey(StringRef cxx,
                                          ArrayRef<std::string> flags) {
  std::string text = "modelc prelude 1\n";
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(cxx, status))
    return std::nullopt;
  text += cxx.str() + "\n" + std::to_string(status.getSize()) + " " +
          std::to_string(llvm::sys::toTimeT(status.getLastModificationTime())) +
          "\n";
  for (const std::string &flag : flags)
    text += flag + "\n";
  text += modelc::generatedCodeIncludes();
  for (const std::string &dir : modelc::generatedCodeIncludeDirs()) {
    std::vector<std::string> files;
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(dir, ec), end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::fs::is_regular_file(it->path()))
        files.push_back(it->path());
    if (ec)
      return std::nullopt;
    llvm::sort(files);
    for (const std::string &file : files) {
      llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer =
          llvm::MemoryBuffer::getFile(file);
      if (!buffer)
        return std::nullopt;
      text += file + "\n" + std::to_string((*buffer)->getBufferSize()) + "\n";
      text += (*buffer)->getBuffer();
    }
  }
  return llvm::xxh3_64bits(text);
}

/// Keeps the cache's preludes to the eight newest (about 35 MB each): the
/// variants one header version has (flags, compilers) and the previous
/// version's. Removes older ones, and unfinished ones (a run that died), once
/// ten minutes old: a run beside this one using one compiles again without
/// it.
static void pruneOldPreludes(StringRef root) {
  std::error_code ec;
  auto now = std::chrono::system_clock::now();
  std::vector<std::pair<llvm::sys::TimePoint<>, std::string>> entries;
  for (llvm::sys::fs::directory_iterator it(root, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::sys::fs::file_status status;
    if (!llvm::sys::fs::status(it->path(), status))
      entries.push_back({status.getLastModificationTime(), it->path()});
  }
  llvm::sort(entries,
             [](const auto &a, const auto &b) { return a.first > b.first; });
  unsigned kept = 0;
  for (const auto &[time, path] : entries) {
    bool unfinished = StringRef(path).contains(".tmp-");
    if (!unfinished && kept < 8) {
      ++kept;
      continue;
    }
    if (now - time > std::chrono::minutes(10))
      llvm::sys::fs::remove_directories(path, /*IgnoreErrors=*/true);
  }
}

/// The generated code's includes precompiled (GCC's .gch), made once per
/// compiler, flags and header contents in the cache folder's pch/: the
/// header to pass with -include (its .gch beside it), or empty where there
/// is none to use (MODELC_PCH=0, no cache folder, a compiler that does not
/// take GCC's precompiled headers): compiling then goes on without one.
/// Parsing the kernels' and the standard library's headers is most of a
/// small model's C++ compile (0.33 s of it, 0.10 s with the .gch).
static std::string precompiledPrelude(StringRef cxx,
                                      ArrayRef<std::string> flags) {
  const char *setting = std::getenv("MODELC_PCH");
  if (setting && StringRef(setting) == "0")
    return "";
  std::string cache = cacheDir();
  std::optional<uint64_t> key = preludeKey(cxx, flags);
  if (cache.empty() || !key)
    return "";
  llvm::SmallString<256> root(cache), entry;
  llvm::sys::path::append(root, "pch");
  entry = root;
  llvm::sys::path::append(entry, llvm::utohexstr(*key, /*LowerCase=*/true));
  auto inEntry = [](StringRef folder, StringRef name) {
    llvm::SmallString<256> path(folder);
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  if (llvm::sys::fs::exists(inEntry(entry, "prelude.h.gch")))
    return inEntry(entry, "prelude.h");
  if (llvm::sys::fs::exists(inEntry(entry, "refused")))
    return "";
  // Made in a folder of its own, then renamed into place whole: a run
  // beside this one sees the entry complete or not at all.
  llvm::SmallString<256> work;
  if (llvm::sys::fs::create_directories(root) ||
      llvm::sys::fs::createUniqueDirectory(entry + ".tmp", work))
    return "";
  std::string header = inEntry(work, "prelude.h"),
              gch = inEntry(work, "prelude.h.gch"),
              probe = inEntry(work, "probe.cpp"), log = inEntry(work, "log");
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(header, ec);
    if (ec)
      return "";
    out << "// The generated code's includes, precompiled beside this file "
           "(modelc's build of model.so).\n"
        << modelc::generatedCodeIncludes();
    llvm::raw_fd_ostream empty(probe, ec);
    if (ec)
      return "";
  }
  std::vector<std::string> build = {cxx.str()};
  llvm::append_range(build, flags);
  llvm::append_range(
      build, std::vector<std::string>{"-x", "c++-header", header, "-o", gch});
  // GCC names a precompiled header it uses with "! " under -H.
  std::vector<std::string> check = {cxx.str()};
  llvm::append_range(check, flags);
  llvm::append_range(check,
                     std::vector<std::string>{"-H", "-fsyntax-only", "-include",
                                              header, probe});
  bool made = succeeded(runTool(build, log, "", /*report=*/false)) &&
              succeeded(runTool(check, log, "", /*report=*/false));
  if (made) {
    auto text = llvm::MemoryBuffer::getFile(log);
    made = text && (*text)->getBuffer().contains("! " + gch);
  }
  if (!made) {
    // Not again for this key: the compiler does not take it.
    llvm::sys::fs::remove(gch);
    std::error_code ec;
    llvm::raw_fd_ostream refused(inEntry(work, "refused"), ec);
  }
  llvm::sys::fs::remove(probe);
  llvm::sys::fs::remove(log);
  if (llvm::sys::fs::rename(work, entry)) {
    // A run beside this one made it first.
    llvm::sys::fs::remove_directories(work, /*IgnoreErrors=*/true);
  } else {
    pruneOldPreludes(root);
  }
  return llvm::sys::fs::exists(inEntry(entry, "prelude.h.gch"))
             ? inEntry(entry, "prelude.h")
             : "";
}

/// Compiles and links model.so (buildSharedLibrary), with -include
/// `prelude` on the generated host sources where it is not empty;
/// `report`: say what failed.
static LogicalResult compileAndLink(StringRef cxx, ArrayRef<std::string> flags,
                                    ArrayRef<std::string> sources,
                                    StringRef output, StringRef logPath,
                                    StringRef emulatedKernels, unsigned jobs,
                                    StringRef prelude, bool report) {
  std::vector<std::string> args = {cxx.str(), "-shared"};
  llvm::append_range(args, flags);
  if (sources.size() > 1 || (!emulatedKernels.empty() && !prelude.empty())) {
    // One object per source, compiled in parallel, then one link (the
    // emulated kernels apart from the host code, which takes the prelude).
    if (jobs == 0)
      jobs = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::pair<std::vector<std::string>, std::string>> compiles;
    auto compile = [&](StringRef source, bool cuda) {
      llvm::SmallString<256> object(source), log(source);
      llvm::sys::path::replace_extension(object, ".o");
      llvm::sys::path::replace_extension(log, ".log");
      std::vector<std::string> command = {cxx.str(), "-c"};
      llvm::append_range(command, flags);
      if (cuda)
        llvm::append_range(command, std::vector<std::string>{"-x", "c++"});
      else if (!prelude.empty())
        llvm::append_range(command,
                           std::vector<std::string>{"-include", prelude.str()});
      llvm::append_range(command, std::vector<std::string>{source.str(), "-o",
                                                           object.str().str()});
      compiles.push_back({std::move(command), log.str().str()});
      args.push_back(object.str().str());
    };
    for (const std::string &source : sources)
      compile(source, false);
    if (!emulatedKernels.empty())
      compile(emulatedKernels, true);
    if (failed(runInParallel(compiles, jobs, report)))
      return failure();
  } else {
    if (!prelude.empty())
      llvm::append_range(args,
                         std::vector<std::string>{"-include", prelude.str()});
    args.push_back(sources.front());
    if (!emulatedKernels.empty()) {
      // The CUDA kernels as host functions (cuda/emulation.h).
      args.push_back("-x");
      args.push_back("c++");
      args.push_back(emulatedKernels.str());
      args.push_back("-x");
      args.push_back("none");
    }
  }
  args.push_back("-o");
  args.push_back(output.str());
  // Only libc, libm and libstdc++: nothing of modelc or CUDA.
  args.push_back("-Wl,--as-needed");
  return runTool(args, logPath, "the C++ compiler", report);
}

LogicalResult modelc::buildSharedLibrary(ArrayRef<std::string> sources,
                                         StringRef output, StringRef logPath,
                                         StringRef emulatedKernels,
                                         unsigned jobs) {
  const char *cxxEnv = std::getenv("CXX");
  std::string cxxName = cxxEnv && *cxxEnv ? cxxEnv : "c++";
  llvm::ErrorOr<std::string> cxx = llvm::sys::findProgramByName(cxxName);
  if (!cxx) {
    llvm::WithColor::error(llvm::errs(), "modelc")
        << "cannot find the C++ compiler '" << cxxName
        << "' (set CXX, or install g++)\n";
    return failure();
  }
  // -fno-trapping-math: nothing enables floating-point traps, and without
  // it GCC keeps the branches of a float select (a clamp, exp_f32's range)
  // and vectorises no loop holding one. NaN and signed zeros keep their
  // meaning (no -ffast-math). -ffp-contract=off: the kernels built for
  // AVX2 and AVX-512 (kernels.h) compute the same bits as the baseline's,
  // on every machine and at every optimisation level (GCC contracts a * b
  // + c to an FMA where the target has one, even with -std=c++17).
  std::vector<std::string> flags = {"-std=c++17",
                                    "-O3",
                                    "-fPIC",
                                    "-fvisibility=hidden",
                                    "-fno-math-errno",
                                    "-fno-trapping-math",
                                    "-ffp-contract=off",
                                    "-w"};
  for (const std::string &dir : modelc::generatedCodeIncludeDirs())
    flags.push_back("-I" + dir);
  if (!emulatedKernels.empty())
    flags.push_back("-DMODELC_GPU_EMULATION");
  std::string prelude = precompiledPrelude(*cxx, flags);
  // Whatever went wrong with the precompiled header (an entry pruned
  // under this run, a compiler changed since) must not fail the build:
  // once more without it, reporting as always.
  if (!prelude.empty()) {
    if (succeeded(compileAndLink(*cxx, flags, sources, output, logPath,
                                 emulatedKernels, jobs, prelude,
                                 /*report=*/false)))
      return success();
    // Made again at the next build, should this one be what failed.
    llvm::sys::fs::remove_directories(llvm::sys::path::parent_path(prelude),
                                      /*IgnoreErrors=*/true);
  }
  return compileAndLink(*cxx, flags, sources, output, logPath, emulatedKernels,
                        jobs, "", /*report=*/true);
}
