//===- Progress.cpp - The compile's phases as they run --------------------===//

#include "Progress.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace lmc::cli {

namespace {

constexpr std::chrono::seconds kShowAfter{2};

/// The phase a pass starts, by its argument; "" for passes that run within
/// the current phase (canonicalize, cse, ...).
llvm::StringRef phaseStartedBy(llvm::StringRef pass) {
  return llvm::StringSwitch<llvm::StringRef>(pass)
      .Case("lmc-split-fused-projections", "loss")
      .Case("lmc-attach-loss", "loss")
      .Case("lmc-autodiff", "autodiff")
      .Case("lmc-rematerialize", "remat")
      .Case("lmc-optimizer", "optimizer")
      .Case("lmc-mixed-precision", "precision")
      .Case("convert-lmc-to-linalg", "linalg")
      .Case("lmc-shard-annotate", "sharding")
      .Case("lmc-untie-fills", "bufferization")
      .Case("lmc-matmul-to-runtime", "lowering")
      .Case("gpu-module-to-binary", "PTX")
      .Case("lmc-assemble-gpu-kernels", "ptxas")
      .Default("");
}

struct PhaseSwitch : public mlir::PassInstrumentation {
  explicit PhaseSwitch(CompileProgress &progress) : progress(progress) {}
  void runBeforePass(mlir::Pass *pass, mlir::Operation *op) override {
    // Module passes only: nested ones run on several threads and inside
    // the phase their module pass belongs to.
    if (!llvm::isa<mlir::ModuleOp>(op))
      return;
    llvm::StringRef phase = phaseStartedBy(pass->getArgument());
    if (!phase.empty())
      progress.enter(phase);
  }
  CompileProgress &progress;
};

} // namespace

CompileProgress::CompileProgress(Mode mode)
    : mode_(mode), start_(Clock::now()), phaseStart_(start_) {
  if (mode_ == Mode::Terminal)
    timer_ = std::thread([this] { waitToShow(); });
}

CompileProgress::~CompileProgress() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  stop_.notify_all();
  if (timer_.joinable())
    timer_.join();
}

void CompileProgress::waitToShow() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (stop_.wait_for(lock, kShowAfter, [this] { return done_; }))
    return;
  shown_ = true;
  showLocked();
}

void CompileProgress::showLocked() {
  for (const Finished &phase : finished_)
    llvm::errs() << llvm::format("lmc: %-14s %7.2f s\n", phase.phase.c_str(),
                                 phase.seconds);
  if (!current_.empty()) {
    llvm::errs() << llvm::format("lmc: %-14s ...", current_.c_str());
    linePending_ = true;
  }
  llvm::errs().flush();
}

void CompileProgress::breakLineLocked() {
  if (!linePending_)
    return;
  llvm::errs() << "\n";
  linePending_ = false;
}

void CompileProgress::endCurrentLocked(Clock::time_point now) {
  if (current_.empty())
    return;
  double seconds = std::chrono::duration<double>(now - phaseStart_).count();
  finished_.push_back({current_, seconds});
  bool print = mode_ == Mode::Verbose || (mode_ == Mode::Terminal && shown_);
  if (print) {
    if (linePending_)
      llvm::errs() << "\r\033[K"; // rewrite the live line with the time
    llvm::errs() << llvm::format("lmc: %-14s %7.2f s\n", current_.c_str(),
                                 seconds);
    linePending_ = false;
  }
  current_.clear();
}

void CompileProgress::enter(llvm::StringRef phase) {
  if (mode_ == Mode::Off)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (phase == current_)
    return;
  Clock::time_point now = Clock::now();
  endCurrentLocked(now);
  current_ = phase.str();
  phaseStart_ = now;
  if (mode_ == Mode::Terminal && shown_) {
    llvm::errs() << llvm::format("lmc: %-14s ...", current_.c_str());
    linePending_ = true;
  }
  llvm::errs().flush();
}

void CompileProgress::finish(bool succeeded) {
  if (mode_ == Mode::Off)
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    Clock::time_point now = Clock::now();
    if (succeeded) {
      endCurrentLocked(now);
      if (mode_ == Mode::Verbose || shown_)
        llvm::errs() << llvm::format(
            "lmc: %-14s %7.2f s\n", "total",
            std::chrono::duration<double>(now - start_).count());
      if (mode_ == Mode::Verbose)
        for (const std::string &note : notes_)
          llvm::errs() << "lmc: " << note << "\n";
    } else {
      breakLineLocked();
    }
    done_ = true;
  }
  stop_.notify_all();
  if (timer_.joinable())
    timer_.join();
}

void CompileProgress::addNote(std::string line) {
  std::lock_guard<std::mutex> lock(mutex_);
  notes_.push_back(std::move(line));
}

std::unique_ptr<mlir::PassInstrumentation> CompileProgress::instrumentation() {
  return std::make_unique<PhaseSwitch>(*this);
}

void CompileProgress::attachTo(mlir::MLIRContext &context) {
  context.getDiagEngine().registerHandler([this](mlir::Diagnostic &) {
    std::lock_guard<std::mutex> lock(mutex_);
    breakLineLocked();
    return mlir::failure(); // the next handler prints it
  });
}

} // namespace lmc::cli
