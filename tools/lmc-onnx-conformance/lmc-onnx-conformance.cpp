//===- lmc-onnx-conformance.cpp - Run the ONNX backend node tests ---------===//
//
//   lmc-onnx-conformance [--expect-pass FILE] [--timeout S] DIR...
//
// Each DIR is an ONNX backend test (model.onnx + test_data_set_0/ with
// input_N.pb / output_N.pb) or a folder of them, such as libonnx-testdata's
// data/node. Every test model is imported forward-only, lowered with lmc's
// real pipeline, JIT-compiled and run on the test's inputs; its outputs are
// compared with the test's (floats: |got - want| <= 1e-4 + 1e-4 |want|;
// integers and booleans exactly). One line per test:
//
//   PASS test_abs Abs
//   UNSUPPORTED test_bitshift_left_uint8 BitShift: <the importer's error>
//   FAIL test_x Op1,Op2: <why>
//
// then the totals. Each test runs in a child process, so a crash or a hang
// (--timeout) fails that test only. With --expect-pass, every test named in
// FILE (one per line, # comments) must pass, else the exit status is 1.
// scripts/conformance.sh turns the lines into docs/onnx-conformance.md.
//
//===----------------------------------------------------------------------===//

#include "lmc/Driver/Jit.h"
#include "lmc/Driver/Pipelines.h"
#include "lmc/Import/Onnx/Onnx.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"
#include "lmc/runtime/kernel_symbols.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/wait.h>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::list<std::string> testDirs(cl::Positional, cl::desc("<test dir>..."),
                               cl::OneOrMore);
cl::opt<std::string> expectPass("expect-pass",
                                cl::desc("file of tests that must pass"));
cl::opt<unsigned> timeoutSeconds("timeout", cl::desc("seconds per test"),
                                 cl::init(60));

constexpr double kTolerance = 1e-4; // rtol and atol, as the issue asks

enum class Status { Pass, Fail, Unsupported };

struct Outcome {
  Status status;
  std::string reason;
};

/// The file's bytes, or nullopt.
std::optional<std::string> readBytes(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return std::nullopt;
  return (*buffer)->getBuffer().str();
}

/// Distinct op types of the model's nodes in first-use order ("Abs").
std::string opTypes(const std::string &modelBytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(modelBytes))
    return "?";
  llvm::StringSet<> seen;
  std::string ops;
  for (const onnx::NodeProto &node : model.graph().node())
    if (seen.insert(node.op_type()).second)
      ops += (ops.empty() ? "" : ",") + node.op_type();
  return ops.empty() ? "-" : ops;
}

/// A tensor's elements as the compiled code reads them: dense, row-major,
/// booleans one byte each.
std::vector<char> elementBytes(DenseElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  std::vector<char> bytes;
  if (type.getElementType().isInteger(1)) {
    for (bool b : value.getValues<bool>())
      bytes.push_back(char(b));
    return bytes;
  }
  ArrayRef<char> raw = value.getRawData();
  int64_t count = value.isSplat() ? type.getNumElements() : 1;
  for (int64_t i = 0; i < count; ++i)
    bytes.insert(bytes.end(), raw.begin(), raw.end());
  return bytes;
}

size_t bufferBytes(RankedTensorType type) {
  unsigned bits = type.getElementTypeBitWidth();
  return size_t(type.getNumElements()) * (bits == 1 ? 1 : bits / 8);
}

/// Where `got` and `want` (same type) first differ beyond the tolerance,
/// as a message; empty when they agree.
std::string compareOutput(RankedTensorType type, const char *got,
                          DenseElementsAttr want) {
  std::vector<char> expected = elementBytes(want);
  Type element = type.getElementType();
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    double g, w;
    if (element.isF32()) {
      float gf, wf;
      std::memcpy(&gf, got + 4 * i, 4);
      std::memcpy(&wf, expected.data() + 4 * i, 4);
      g = gf, w = wf;
    } else if (element.isF64()) {
      std::memcpy(&g, got + 8 * i, 8);
      std::memcpy(&w, expected.data() + 8 * i, 8);
    } else {
      size_t width = bufferBytes(type) / size_t(type.getNumElements());
      if (std::memcmp(got + width * i, expected.data() + width * i, width))
        return "element " + std::to_string(i) + " differs";
      continue;
    }
    bool agree = (std::isnan(g) && std::isnan(w)) || g == w ||
                 std::fabs(g - w) <= kTolerance + kTolerance * std::fabs(w);
    if (!agree) {
      char message[128];
      std::snprintf(message, sizeof message,
                    "element %lld: got %.9g, expected %.9g", (long long)i, g, w);
      return message;
    }
  }
  return "";
}

std::string typeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

std::string testDataPath(const std::string &dir, StringRef prefix, int n) {
  return dir + "/test_data_set_0/" + prefix.str() + "_" + std::to_string(n) +
         ".pb";
}

bool isIntegerOrBool(int32_t dataType) {
  return dataType != onnx::TensorProto::FLOAT &&
         dataType != onnx::TensorProto::DOUBLE &&
         dataType != onnx::TensorProto::FLOAT16 &&
         dataType != onnx::TensorProto::BFLOAT16;
}

/// Which test inputs a second import binds as constants: the integer and
/// boolean ones (shape-like operands) and, when the importer asked for a
/// float scalar (Dropout's ratio), the float scalars, or for a float
/// vector (Resize's scales), the float tensors of rank 0 or 1.
struct ConstantInputs {
  bool floatScalars = false;
  bool floatVectors = false;

  bool contains(const onnx::TensorProto &value) const {
    return isIntegerOrBool(value.data_type()) ||
           (floatScalars && value.dims_size() == 0) ||
           (floatVectors && value.dims_size() <= 1);
  }
};

/// Reads test_data_set_0/<prefix>_N.pb for N = 0, 1, ... (with `skip`:
/// without the inputs it binds).
FailureOr<SmallVector<DenseElementsAttr>>
readTensors(MLIRContext &context, const std::string &dir, StringRef prefix,
            const ConstantInputs *skip = nullptr) {
  SmallVector<DenseElementsAttr> tensors;
  for (int n = 0;; ++n) {
    std::string path = testDataPath(dir, prefix, n);
    std::optional<std::string> bytes = readBytes(path);
    if (!bytes)
      return tensors;
    onnx::TensorProto proto;
    if (skip && proto.ParseFromString(*bytes) && skip->contains(proto))
      continue;
    FailureOr<DenseElementsAttr> tensor =
        lmc::readOnnxTensorProto(context, *bytes, path);
    if (failed(tensor))
      return failure();
    tensors.push_back(*tensor);
  }
}

/// Whether the importer refused a runtime value where lmc needs a constant
/// shape-like operand (axes, shape, k, starts, split, repeats, a scalar
/// size, a training flag). Integer data (Abs of int32 values) is not one.
bool needsConstantOperands(StringRef error) {
  return error.contains("must be a compile-time constant integer tensor") ||
         error.contains("must be a compile-time scalar") ||
         error.contains("must be a compile-time float scalar") ||
         error.contains("must be a compile-time constant float tensor") ||
         (error.contains("training_mode") &&
          error.contains("must be a compile-time constant"));
}

/// The model with every graph input `bound` contains replaced by an
/// initializer holding the test's value for it.
std::string bindInputs(const std::string &modelBytes, const std::string &dir,
                       const ConstantInputs &bound) {
  onnx::ModelProto model;
  model.ParseFromString(modelBytes);
  onnx::GraphProto *graph = model.mutable_graph();
  llvm::StringSet<> initialized;
  for (const onnx::TensorProto &init : graph->initializer())
    initialized.insert(init.name());
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> kept;
  int n = 0;
  for (const onnx::ValueInfoProto &input : graph->input()) {
    if (initialized.contains(input.name())) {
      *kept.Add() = input;
      continue;
    }
    std::optional<std::string> bytes = readBytes(testDataPath(dir, "input", n++));
    onnx::TensorProto value;
    if (bytes && value.ParseFromString(*bytes) && bound.contains(value)) {
      value.set_name(input.name());
      *graph->add_initializer() = value;
      continue;
    }
    *kept.Add() = input;
  }
  graph->mutable_input()->Swap(&kept);
  return model.SerializeAsString();
}

/// Imports, lowers, JIT-compiles and runs one test (in a child process).
Outcome runTest(const DialectRegistry &registry, const std::string &dir) {
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::string firstError;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error && firstError.empty())
      firstError = diag.str();
    return success();
  });
  auto fail = [&](Status status, const std::string &what) {
    return Outcome{status, firstError.empty() ? what : what + ": " + firstError};
  };

  const std::string modelPath = dir + "/model.onnx";
  std::optional<std::string> model = readBytes(modelPath);
  if (!model)
    return {Status::Fail, "cannot read model.onnx"};
  FailureOr<SmallVector<DenseElementsAttr>> inputs =
      readTensors(context, dir, "input");
  FailureOr<SmallVector<DenseElementsAttr>> outputs =
      readTensors(context, dir, "output");
  if (failed(inputs) || failed(outputs))
    return fail(Status::Unsupported, "test data");

  lmc::OnnxImportOptions options;
  // Symbolic dimensions bind to the first input's leading size.
  if (!inputs->empty() && (*inputs)[0].getType().getRank() > 0)
    options.batch = (*inputs)[0].getType().getDimSize(0);
  OwningOpRef<ModuleOp> module =
      lmc::importOnnxBuffer(context, *model, modelPath, options);
  std::string note;
  // lmc compiles for static shapes: an axes/shape/k operand must be a
  // constant, which the tests pass as inputs. Bind the integer and boolean
  // inputs (then float scalars too, when asked for one) to the test's
  // values and import again.
  ConstantInputs bound;
  for (int retry = 0; !module && needsConstantOperands(firstError) && retry < 2;
       ++retry) {
    bool floatScalars = StringRef(firstError).contains(
        "must be a compile-time float scalar");
    bool floatVectors = StringRef(firstError).contains(
        "must be a compile-time constant float tensor");
    if (retry > 0 && !floatScalars && !floatVectors)
      break;
    bound.floatScalars = floatScalars;
    bound.floatVectors = floatVectors;
    std::string specialized = bindInputs(*model, dir, bound);
    firstError.clear();
    inputs = readTensors(context, dir, "input", &bound);
    module = lmc::importOnnxBuffer(context, specialized, modelPath, options);
    note = bound.floatScalars   ? "with its integer and scalar inputs as "
                                  "constants"
           : bound.floatVectors ? "with its integer inputs and float "
                                  "vectors as constants"
                                : "with its integer inputs as constants";
  }
  if (!module)
    return fail(Status::Unsupported, "import");
  auto forward = module->lookupSymbol<func::FuncOp>(lmc::attrs::kForward);
  for (unsigned i = 0; i < forward.getNumArguments(); ++i)
    if (forward.getArgAttr(i, lmc::attrs::kRngKey))
      return fail(Status::Unsupported,
                  "random numbers (training-mode Dropout, RandomUniformLike: "
                  "the draws of lmc and of numpy differ)");
  // Buffer updates (running statistics of initializers) follow the outputs.
  unsigned numOutputs = 0;
  while (numOutputs < forward.getNumResults() &&
         forward.getResultAttr(numOutputs, lmc::attrs::kOutput))
    ++numOutputs;

  // The call's buffers: parameters (initializers), inputs, then results.
  std::vector<std::vector<char>> buffers;
  size_t nextInput = 0;
  for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(forward.getArgumentTypes()[i]);
    if (auto init = forward.getArgAttrOfType<DenseElementsAttr>(
            i, lmc::attrs::kInit)) {
      buffers.push_back(elementBytes(init));
      continue;
    }
    if (nextInput >= inputs->size())
      return {Status::Fail, "the test provides fewer inputs than the model"};
    DenseElementsAttr input = (*inputs)[nextInput++];
    if (input.getType() != type)
      return {Status::Fail, "input " + std::to_string(nextInput - 1) +
                                " is " + typeString(input.getType()) +
                                ", the model expects " + typeString(type)};
    buffers.push_back(elementBytes(input));
  }
  if (numOutputs != outputs->size())
    return {Status::Fail, "the model has " + std::to_string(numOutputs) +
                              " outputs, the test " +
                              std::to_string(outputs->size())};
  size_t firstResult = buffers.size();
  SmallVector<RankedTensorType> resultTypes;
  for (auto [type, want] : llvm::zip(forward.getResultTypes(), *outputs)) {
    auto result = cast<RankedTensorType>(type);
    if (result != want.getType())
      return {Status::Fail, "output is " + typeString(result) +
                                ", the test expects " +
                                typeString(want.getType())};
    resultTypes.push_back(result);
    buffers.emplace_back(bufferBytes(result) + 1, 0);
  }
  // Buffer updates: computed, not compared.
  for (Type type : forward.getResultTypes().drop_front(numOutputs))
    buffers.emplace_back(bufferBytes(cast<RankedTensorType>(type)) + 1, 0);

  PassManager pm(&context);
  lmc::buildLmcLoweringPipeline(pm);
  if (failed(pm.run(*module)))
    return fail(Status::Fail, "lowering");
  FailureOr<lmc::JitModule> jit =
      lmc::jitCompile(*module, {lmc::attrs::kForward}, lmc::rt::kernelSymbols());
  if (failed(jit))
    return fail(Status::Fail, "JIT");
  std::vector<void *> pointers;
  for (std::vector<char> &buffer : buffers)
    pointers.push_back(buffer.data());
  jit->entries[0](pointers.data());

  for (auto [k, type] : llvm::enumerate(resultTypes)) {
    std::string mismatch = compareOutput(
        type, buffers[firstResult + k].data(), (*outputs)[k]);
    if (!mismatch.empty())
      return {Status::Fail, "output " + std::to_string(k) + ": " + mismatch};
  }
  return {Status::Pass, note};
}

const char *statusName(Status status) {
  switch (status) {
  case Status::Pass:
    return "PASS";
  case Status::Fail:
    return "FAIL";
  case Status::Unsupported:
    return "UNSUPPORTED";
  }
  return "?";
}

/// Runs `dir` in a child process; its one-line outcome comes through a pipe.
Outcome runIsolated(const DialectRegistry &registry, const std::string &dir) {
  int fds[2];
  if (::pipe(fds) != 0)
    return {Status::Fail, "pipe failed"};
  pid_t pid = ::fork();
  if (pid < 0)
    return {Status::Fail, "fork failed"};
  if (pid == 0) {
    ::close(fds[0]);
    ::alarm(timeoutSeconds);
    Outcome outcome = runTest(registry, dir);
    std::string line = std::string(1, char('0' + int(outcome.status))) +
                       outcome.reason;
    std::replace(line.begin(), line.end(), '\n', ' ');
    (void)!::write(fds[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string line;
  char chunk[4096];
  ssize_t n;
  while ((n = ::read(fds[0], chunk, sizeof chunk)) > 0)
    line.append(chunk, size_t(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return {Status::Fail, WTERMSIG(status) == SIGALRM
                              ? "timed out"
                              : "crashed (" +
                                    std::string(strsignal(WTERMSIG(status))) +
                                    ")"};
  if (line.empty())
    return {Status::Fail, "no result"};
  return {Status(line[0] - '0'), line.substr(1)};
}

/// Test directories: each DIR with a model.onnx, else its sorted children
/// that have one.
std::vector<std::string> collectTests() {
  std::vector<std::string> tests;
  for (const std::string &dir : testDirs) {
    if (llvm::sys::fs::exists(dir + "/model.onnx")) {
      tests.push_back(dir);
      continue;
    }
    std::vector<std::string> children;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec))
      if (llvm::sys::fs::exists(it->path() + "/model.onnx"))
        children.push_back(it->path());
    llvm::sort(children);
    llvm::append_range(tests, children);
  }
  return tests;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::ParseCommandLineOptions(argc, argv, "ONNX backend test runner\n");
  DialectRegistry registry;
  lmc::registerLmcDialects(registry);
  lmc::registerLmcPasses();

  llvm::StringSet<> mustPass;
  if (!expectPass.empty()) {
    std::optional<std::string> text = readBytes(expectPass);
    if (!text) {
      llvm::errs() << "lmc-onnx-conformance: cannot read " << expectPass
                   << "\n";
      return 2;
    }
    for (StringRef line : llvm::split(*text, '\n')) {
      line = line.split('#').first.trim();
      if (!line.empty())
        mustPass.insert(line);
    }
  }

  int counts[3] = {0, 0, 0};
  std::vector<std::string> regressions;
  for (const std::string &dir : collectTests()) {
    std::string name = llvm::sys::path::filename(dir).str();
    Outcome outcome = runIsolated(registry, dir);
    ++counts[int(outcome.status)];
    llvm::outs() << statusName(outcome.status) << ' ' << name << ' '
                 << opTypes(readBytes(dir + "/model.onnx").value_or(""));
    if (!outcome.reason.empty())
      llvm::outs() << ": " << outcome.reason;
    llvm::outs() << '\n';
    llvm::outs().flush();
    if (outcome.status != Status::Pass && mustPass.contains(name))
      regressions.push_back(name);
  }
  llvm::outs() << "total: " << counts[0] + counts[1] + counts[2]
               << ", passed: " << counts[0] << ", failed: " << counts[1]
               << ", unsupported: " << counts[2] << '\n';
  for (const std::string &name : regressions)
    llvm::outs() << "regression: " << name << " no longer passes\n";
  return regressions.empty() ? 0 : 1;
}
