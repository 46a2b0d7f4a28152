//===- lmc-gradcheck.cpp - finite-difference check of lmc's gradients -----===//
//
//   lmc-gradcheck file.mlir [--seed S] [--low L] [--high H] [--inject-error]
//
// For every public function `@f(args) -> tensor<f64>` in the file, builds its
// gradient with the lmc-autodiff pass, JIT-compiles both through the real
// lowering pipeline, and compares the gradient with respect to every
// argument tagged `lmc.param` against a fourth-order central finite
// difference of @f in f64. Other arguments are inputs: floats drawn from
// [low, high] (or the argument's `gradcheck.range = [lo, hi]`), integers from
// [0, gradcheck.classes). Exits 1 when any relative error exceeds
// --tolerance; --inject-error perturbs one gradient entry to show that the
// check can fail.
//
//===----------------------------------------------------------------------===//

#include "lmc/Driver/Jit.h"
#include "lmc/Driver/Pipelines.h"
#include "lmc/Transforms/Passes.h"
#include "lmc/runtime/kernel_symbols.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <random>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::opt<std::string> inputPath(cl::Positional, cl::desc("<file.mlir>"),
                               cl::Required);
cl::opt<uint64_t> seed("seed", cl::desc("random seed"), cl::init(1));
cl::opt<double> low("low", cl::desc("lower bound of random inputs"),
                    cl::init(-1.0));
cl::opt<double> high("high", cl::desc("upper bound of random inputs"),
                     cl::init(1.0));
cl::opt<double> tolerance("tolerance", cl::desc("largest relative error"),
                          cl::init(1e-6));
cl::opt<bool> injectError("inject-error",
                          cl::desc("perturb one gradient entry (self-test)"),
                          cl::init(false));

/// One argument or result buffer, in f64 or i64.
struct Buffer {
  std::vector<double> f64;
  std::vector<int64_t> i64;
  void *data() { return f64.empty() ? (void *)i64.data() : (void *)f64.data(); }
};

Buffer makeBuffer(RankedTensorType type) {
  Buffer buffer;
  size_t n = type.getNumElements();
  if (isa<FloatType>(type.getElementType()))
    buffer.f64.assign(n, 0.0);
  else
    buffer.i64.assign(n, 0);
  return buffer;
}

class GradientCheck {
public:
  GradientCheck(func::FuncOp func, std::mt19937_64 &rng)
      : name(func.getName().str()), rng(rng) {
    original = func;
  }

  /// Returns false on failure (diagnostics or messages already printed).
  bool run() {
    if (!validateSignature())
      return false;
    if (failed(compile()))
      return false;
    makeInputs();
    return compare();
  }

private:
  bool validateSignature() {
    if (original.getNumResults() != 1 ||
        original.getResultTypes()[0] !=
            RankedTensorType::get({}, Float64Type::get(original.getContext()))) {
      original.emitError("expected a single tensor<f64> result");
      return false;
    }
    for (Type type : original.getArgumentTypes()) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      if (!tensor || !tensor.hasStaticShape() ||
          !(tensor.getElementType().isF64() ||
            tensor.getElementType().isInteger(64))) {
        original.emitError("expected static f64 or i64 tensor arguments");
        return false;
      }
    }
    return true;
  }

  LogicalResult compile() {
    MLIRContext *ctx = original.getContext();
    module = ModuleOp::create(UnknownLoc::get(ctx));
    func::FuncOp forward = original.clone();
    forward.setName("forward");
    module->push_back(forward);
    unsigned numArgs = forward.getNumArguments();

    PassManager pm(ctx);
    pm.addPass(lmc::createLmcAutodiff());
    lmc::buildLmcLoweringPipeline(pm);
    if (failed(pm.run(*module)))
      return failure();
    auto lowered = module->lookupSymbol<LLVM::LLVMFuncOp>("forward");
    if (!lowered || lowered.getNumArguments() != numArgs + 1)
      return original.emitError(
          "every lmc.param argument must reach the result");

    FailureOr<lmc::JitModule> compiled = lmc::jitCompile(
        *module, {"forward", "forward_grad"}, lmc::rt::kernelSymbols());
    if (failed(compiled))
      return failure();
    jit = std::move(*compiled);
    forwardFn = jit.entries[0];
    gradFn = jit.entries[1];
    return success();
  }

  void makeInputs() {
    for (unsigned i = 0; i < original.getNumArguments(); ++i) {
      auto type = cast<RankedTensorType>(original.getArgumentTypes()[i]);
      Buffer buffer = makeBuffer(type);
      if (auto classes =
              original.getArgAttrOfType<IntegerAttr>(i, "gradcheck.classes")) {
        std::uniform_int_distribution<int64_t> dist(0, classes.getInt() - 1);
        for (int64_t &v : buffer.i64)
          v = dist(rng);
      }
      double lo = low, hi = high;
      if (auto range = original.getArgAttrOfType<ArrayAttr>(i, "gradcheck.range")) {
        lo = cast<FloatAttr>(range[0]).getValueAsDouble();
        hi = cast<FloatAttr>(range[1]).getValueAsDouble();
      }
      std::uniform_real_distribution<double> dist(lo, hi);
      for (double &v : buffer.f64)
        v = dist(rng);
      args.push_back(std::move(buffer));
      if (original.getArgAttr(i, "lmc.param"))
        params.push_back(i);
    }
  }

  double evaluate() {
    double loss = 0;
    std::vector<void *> pointers;
    for (Buffer &b : args)
      pointers.push_back(b.data());
    pointers.push_back(&loss);
    forwardFn(pointers.data());
    return loss;
  }

  std::vector<std::vector<double>> gradients() {
    double loss = 0;
    std::vector<std::vector<double>> grads;
    std::vector<void *> pointers;
    for (Buffer &b : args)
      pointers.push_back(b.data());
    pointers.push_back(&loss);
    for (unsigned p : params)
      grads.emplace_back(args[p].f64.size());
    for (auto &g : grads)
      pointers.push_back(g.data());
    gradFn(pointers.data());
    return grads;
  }

  /// Fourth-order central difference of the loss along one element.
  double finiteDifference(double &x) {
    double saved = x;
    double h = 1e-4 * std::max(1.0, std::fabs(saved));
    auto at = [&](double offset) {
      x = saved + offset;
      return evaluate();
    };
    double d = (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
    x = saved;
    return d;
  }

  bool compare() {
    std::vector<std::vector<double>> grads = gradients();
    if (injectError && !grads.empty() && !grads[0].empty())
      grads[0][0] += 1e-4 * std::max(1.0, std::fabs(grads[0][0]));
    bool ok = true;
    for (auto [k, p] : llvm::enumerate(params)) {
      std::vector<double> &x = args[p].f64;
      double worst = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        double numeric = finiteDifference(x[i]);
        double analytic = grads[k][i];
        // Relative to the larger magnitude, floored so that entries that
        // are zero up to rounding compare absolutely.
        double scale = std::max({std::fabs(numeric), std::fabs(analytic), 1e-3});
        worst = std::max(worst, std::fabs(numeric - analytic) / scale);
      }
      auto paramName = original.getArgAttrOfType<StringAttr>(p, "lmc.param");
      bool passed = worst < tolerance;
      ok &= passed;
      llvm::outs() << "@" << name << " " << paramName.getValue() << ": "
                   << x.size() << " entries, max relative error "
                   << llvm::format("%.3g", worst) << " "
                   << (passed ? "ok" : "FAILED") << "\n";
    }
    return ok;
  }

  std::string name;
  std::mt19937_64 &rng;
  func::FuncOp original;
  OwningOpRef<ModuleOp> module;
  lmc::JitModule jit;
  lmc::PackedFn forwardFn = nullptr;
  lmc::PackedFn gradFn = nullptr;
  std::vector<Buffer> args;
  std::vector<unsigned> params;
};

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "lmc gradient checker\n");

  DialectRegistry registry;
  lmc::registerLmcDialects(registry);
  lmc::registerLmcPasses();
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  std::string error;
  auto file = openInputFile(inputPath, &error);
  if (!file) {
    llvm::errs() << "lmc-gradcheck: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  std::mt19937_64 rng(seed);
  bool ok = true;
  for (auto func : module->getOps<func::FuncOp>()) {
    if (func.isPrivate())
      continue;
    GradientCheck check(func, rng);
    ok &= check.run();
  }
  return ok ? 0 : 1;
}
