//===- Progress.h - The compile's phases as they run ----------------------===//
//
// A GPT-2 compile takes a minute; a compiler that prints nothing for that
// long looks hung. On a terminal, once a compile has run 2 s, lmc shows the
// phase it is in and each finished phase with its time:
//
//   lmc: import        1.84 s
//   lmc: autodiff      0.91 s
//   lmc: lowering ...
//
// With -v it prints the same lines (without the live one) wherever stderr
// goes; --quiet prints none.
//
//===----------------------------------------------------------------------===//
#ifndef LMC_TOOLS_LMC_PROGRESS_H
#define LMC_TOOLS_LMC_PROGRESS_H

#include "mlir/Pass/PassInstrumentation.h"

#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace lmc::cli {

class CompileProgress {
public:
  enum class Mode {
    Off,      // --quiet, or stderr is not a terminal
    Terminal, // a live line, from 2 s on
    Verbose,  // -v: a line per finished phase
  };
  explicit CompileProgress(Mode mode);
  ~CompileProgress();

  /// Ends the current phase (if any) and starts `phase`.
  void enter(llvm::StringRef phase);
  /// Ends the last phase; on success prints the total, then the notes.
  void finish(bool succeeded);
  /// -v: a line printed after the phase times (a summary of what a phase
  /// built); nothing in the other modes.
  void addNote(std::string line);
  bool verbose() const { return mode_ == Mode::Verbose; }

  /// Switches phases as the passes that start them run (lmc-autodiff
  /// starts "autodiff", ...). Add to every PassManager of the compile.
  std::unique_ptr<mlir::PassInstrumentation> instrumentation();
  /// Lets diagnostics start on a line of their own while a live line is
  /// shown (registered after the context's other handlers, it runs first
  /// and passes every diagnostic on).
  void attachTo(mlir::MLIRContext &context);

private:
  using Clock = std::chrono::steady_clock;
  struct Finished {
    std::string phase;
    double seconds;
  };
  void endCurrentLocked(Clock::time_point now);
  void showLocked();
  void breakLineLocked();
  void waitToShow();

  Mode mode_;
  std::mutex mutex_;
  std::condition_variable stop_;
  bool done_ = false;
  bool shown_ = false;       // Terminal: past the 2 s mark
  bool linePending_ = false; // Terminal: the live line has no newline yet
  Clock::time_point start_, phaseStart_;
  std::string current_;
  std::vector<Finished> finished_;
  std::vector<std::string> notes_;
  std::thread timer_;
};

} // namespace lmc::cli

#endif // LMC_TOOLS_LMC_PROGRESS_H
