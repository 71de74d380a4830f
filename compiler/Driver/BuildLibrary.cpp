//===- BuildLibrary.cpp - compile generated sources into model.so ---------===//

#include "compiler/Driver/BuildLibrary.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
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
                             StringRef logPath, StringRef what) {
  SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string logPathText = logPath.str();
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPathText),
                                          StringRef(logPathText)};
  std::string errorMessage;
  int status = llvm::sys::ExecuteAndWait(args.front(), argRefs, std::nullopt,
                                         redirects, 0, 0, &errorMessage);
  if (status == 0)
    return success();
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
  for (const std::string &dir : generatedCodeIncludeDirs())
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
    unsigned jobs) {
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
  for (const std::string &dir : generatedCodeIncludeDirs())
    flags.push_back("-I" + dir);
  if (!emulatedKernels.empty())
    flags.push_back("-DMODELC_GPU_EMULATION");
  std::vector<std::string> args = {*cxx, "-shared"};
  llvm::append_range(args, flags);
  if (sources.size() > 1) {
    // One object per source, compiled in parallel, then one link.
    if (jobs == 0)
      jobs = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::pair<std::vector<std::string>, std::string>> compiles;
    auto compile = [&](StringRef source, bool cuda) {
      llvm::SmallString<256> object(source), log(source);
      llvm::sys::path::replace_extension(object, ".o");
      llvm::sys::path::replace_extension(log, ".log");
      std::vector<std::string> command = {*cxx, "-c"};
      llvm::append_range(command, flags);
      if (cuda)
        llvm::append_range(command, std::vector<std::string>{"-x", "c++"});
      llvm::append_range(command, std::vector<std::string>{source.str(), "-o",
                                                           object.str().str()});
      compiles.push_back({std::move(command), log.str().str()});
      args.push_back(object.str().str());
    };
    for (const std::string &source : sources)
      compile(source, false);
    if (!emulatedKernels.empty())
      compile(emulatedKernels, true);
    if (failed(runInParallel(compiles, jobs)))
      return failure();
  } else {
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
  return runTool(args, logPath, "the C++ compiler");
}
