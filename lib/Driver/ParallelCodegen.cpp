//===- ParallelCodegen.cpp - -O3 and machine code on parallel threads ----===//
//
// A GPT-2 step is hundreds of outlined loop nests; LLVM optimizes and
// compiles one function at a time, so one thread did all of it (33 of the
// 41 s of a GPT-2 124M compile). The module is split into parts, each
// serialized to bitcode and read back into a context of its own (LLVM
// contexts are single-threaded), then optimized and compiled on its own
// thread, as LLVM's ParallelCG does for codegen alone.
//
//===----------------------------------------------------------------------===//

#include "lmc/Driver/Emit.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <algorithm>
#include <atomic>
#include <thread>

using namespace mlir;

namespace lmc {

LogicalResult emitObjectFilesInParallel(
    MLIRContext *ctx, llvm::Module &module,
    llvm::ArrayRef<std::string> objectPaths, const TargetCpu &cpu,
    llvm::function_ref<void(llvm::StringRef)> enterPhase) {
  // Also registers the native target before any thread needs it.
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine =
      createTargetMachine(cpu);
  if (!machine)
    return emitError(UnknownLoc::get(ctx), "lmc: ")
           << llvm::toString(machine.takeError());
  module.setDataLayout((*machine)->createDataLayout());
  module.setTargetTriple((*machine)->getTargetTriple());
  limitFullUnrolling(); // before the threads: it sets a global option

  if (enterPhase)
    enterPhase("LLVM split");
  std::vector<llvm::SmallString<0>> parts;
  llvm::SplitModule(
      module, unsigned(objectPaths.size()),
      [&](std::unique_ptr<llvm::Module> part) {
        llvm::SmallString<0> bitcode;
        llvm::raw_svector_ostream os(bitcode);
        llvm::WriteBitcodeToFile(*part, os);
        parts.push_back(std::move(bitcode));
      },
      /*PreserveLocals=*/false, /*RoundRobin=*/true);

  if (enterPhase)
    enterPhase("LLVM -O3+code");
  std::vector<std::string> errors(parts.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < parts.size(); i = next++) {
      llvm::LLVMContext context;
      llvm::Expected<std::unique_ptr<llvm::Module>> part =
          llvm::parseBitcodeFile(
              llvm::MemoryBufferRef(
                  llvm::StringRef(parts[i].data(), parts[i].size()), "part"),
              context);
      if (!part) {
        errors[i] = llvm::toString(part.takeError());
        continue;
      }
      llvm::Expected<std::unique_ptr<llvm::TargetMachine>> partMachine =
          createTargetMachine(cpu);
      if (!partMachine) {
        errors[i] = llvm::toString(partMachine.takeError());
        continue;
      }
      optimizeForTarget(**part, **partMachine);
      errors[i] = writeObject(**part, **partMachine, objectPaths[i]);
    }
  };
  unsigned threads = std::min<unsigned>(
      unsigned(parts.size()), std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &thread : pool)
    thread.join();
  for (const std::string &partError : errors)
    if (!partError.empty())
      return emitError(UnknownLoc::get(ctx), "lmc: ") << partError;
  return success();
}

} // namespace lmc
