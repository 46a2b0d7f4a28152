//===- Emitter.h - evaluation of the lmc DSL into the lmc dialect -*- C++ -*-===//
//
// The emitter walks the syntax tree of the model body once, like an
// interpreter whose tensor values are SSA values: compile-time numbers are
// folded, `def` calls and `repeat` bodies are inlined (so every parameter
// gets its own hierarchical name), and every tensor carries its shape with
// the names of its dimensions, so that a mismatch is reported as
// `f32[B,64] @ f32[128,64]` at the operator. An error yields a poison value
// that silences follow-up errors, so one run reports independent mistakes.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_IMPORT_DSLEMITTER_H
#define LMC_LIB_IMPORT_DSLEMITTER_H

#include "Ast.h"

#include "lmc/Import/Dsl/Dsl.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringMap.h"

namespace lmc::dsl {

/// One tensor dimension: its size and, when known, the name it was declared
/// with (`B`, `dim`), used in diagnostics.
struct Dim {
  int64_t size = 0;
  std::string name;
};
using Shape = llvm::SmallVector<Dim, 4>;

/// A number as a user wrote it: `0.5`, `-1`, `3e-05`.
inline std::string formatNumber(double value) {
  char text[32];
  snprintf(text, sizeof(text), "%g", value);
  return text;
}

/// `f32[B,64]`.
std::string formatType(mlir::Type elementType, llvm::ArrayRef<Dim> shape);
llvm::SmallVector<int64_t> sizes(llvm::ArrayRef<Dim> shape);

class Env;
struct Closure {
  std::shared_ptr<DefDecl> decl;
  std::shared_ptr<Env> env;
};
struct Instance;

/// A value of the DSL.
struct Val {
  enum Kind { Poison, Int, Float, Str, Tensor, List, Def, Layer } kind = Poison;
  int64_t i = 0;
  double f = 0;
  std::string s;
  mlir::Value value; // Tensor
  Shape shape;       // Tensor
  std::vector<Val> items;
  std::shared_ptr<Closure> def;
  std::shared_ptr<Instance> layer;
  std::optional<SrcLoc> declared; // inputs and params, for notes
  std::string buffer; // the full name when this is a buffer's value

  static Val poison() { return Val(); }
  static Val ofInt(int64_t v) {
    Val r;
    r.kind = Int;
    r.i = v;
    return r;
  }
  static Val ofFloat(double v) {
    Val r;
    r.kind = Float;
    r.f = v;
    return r;
  }
  static Val ofTensor(mlir::Value v, Shape shape) {
    Val r;
    r.kind = Tensor;
    r.value = v;
    r.shape = std::move(shape);
    return r;
  }
  bool isNumber() const { return kind == Int || kind == Float; }
  double number() const { return kind == Int ? double(i) : f; }
  mlir::RankedTensorType type() const {
    return llvm::cast<mlir::RankedTensorType>(value.getType());
  }
  mlir::Type elementType() const { return type().getElementType(); }
  std::string describe() const;
};

/// A layer declared with `param NAME = def(args)`: the def with its leading
/// arguments bound, whose parameters live under NAME.
struct Instance {
  std::shared_ptr<Closure> def;
  std::vector<Val> args;
  std::string prefix;
  SrcLoc loc;
  bool called = false;
};

/// A lexical scope. Assignment rebinds a name of an enclosing scope of the
/// same function (so `repeat` bodies update the loop-carried value) but
/// never a captured name of the scope a def was defined in.
class Env {
public:
  Env(std::shared_ptr<Env> parent, bool functionBoundary)
      : parent(std::move(parent)), functionBoundary(functionBoundary) {}
  Val *lookup(llvm::StringRef name);
  void assign(llvm::StringRef name, Val value);
  void define(llvm::StringRef name, Val value) { vars[name] = std::move(value); }
  /// Drops the bindings: a def stored in the scope it captures is a
  /// reference cycle, broken when the emitter is done.
  void clear() {
    vars.clear();
    parent.reset();
  }
  Val *lookupLocal(llvm::StringRef name) {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : &it->second;
  }

private:
  llvm::StringMap<Val> vars;
  std::shared_ptr<Env> parent;
  bool functionBoundary;
};

/// Arguments of a call as built-ins see them.
struct CallArgs {
  std::vector<Val> positional;
  std::vector<SrcLoc> positionalLocs;
  std::vector<std::pair<std::string, Val>> keyword;
  std::vector<SrcLoc> keywordLocs;
};

class Emitter {
public:
  Emitter(mlir::MLIRContext &context, const DslImportOptions &options,
          std::optional<int64_t> trainBatch, uint64_t seed);
  ~Emitter() {
    for (const std::shared_ptr<Env> &env : capturedEnvs)
      env->clear();
  }

  /// Builds the module for `model`; null after any error.
  mlir::OwningOpRef<mlir::ModuleOp> run(const Program &program,
                                        const ModelDecl &model);

  // --- diagnostics (Emitter.cpp) ---
  mlir::InFlightDiagnostic error(SrcLoc loc);
  void noteDeclared(mlir::InFlightDiagnostic &diag, const Val &value,
                    llvm::StringRef what);
  mlir::Location loc(SrcLoc l) { return l.get(&context); }

  // --- expressions (Expressions.cpp) ---
  Val eval(const Expr &expr, const std::shared_ptr<Env> &env);
  Val binary(llvm::StringRef op, const Val &lhs, const Val &rhs, SrcLoc at);
  Val negate(const Val &operand, SrcLoc at);
  Val matmul(const Val &lhs, const Val &rhs, SrcLoc at);
  /// `value` as a tensor of `like`'s element type (numbers are splat).
  mlir::FailureOr<Val> broadcastTo(const Val &value, llvm::ArrayRef<Dim> shape,
                                   mlir::Type elementType, SrcLoc at);
  mlir::Value splat(mlir::Type elementType, llvm::ArrayRef<Dim> shape,
                    double value, SrcLoc at);

  // --- built-in functions (Builtins.cpp) ---
  bool isBuiltin(llvm::StringRef name) const;
  Val callBuiltin(llvm::StringRef name, CallArgs &args, SrcLoc at);

  // --- parameter initializers (Init.cpp) ---
  mlir::FailureOr<mlir::DenseElementsAttr>
  initializer(const Expr &init, const std::shared_ptr<Env> &env,
              mlir::RankedTensorType type, llvm::StringRef paramName);

  // Helpers for built-ins.
  mlir::FailureOr<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                         SrcLoc at);
  /// The training step's random key (an i64 scalar argument tagged
  /// lmc.rng_key), added on first use.
  mlir::Value rngKey(SrcLoc at);
  /// Makes `updated` the value of buffer `buffer` after a training step
  /// (a result of the forward function tagged lmc.buffer). Reports an
  /// error at `at` when `buffer` is not a buffer or is already updated.
  mlir::LogicalResult updateBuffer(const Val &buffer, mlir::Value updated,
                                   SrcLoc at, llvm::StringRef what);
  /// A new stream of random numbers for each call of a random built-in.
  int64_t nextRandomStream() { return randomStreams++; }
  mlir::MLIRContext &context;
  mlir::OpBuilder b;

private:
  struct Frame {
    bool isModel;
    std::optional<Val> result;
  };
  void execBody(const std::vector<StmtPtr> &body,
                const std::shared_ptr<Env> &env, Frame &frame);
  void exec(const Stmt &stmt, const std::shared_ptr<Env> &env, Frame &frame);
  void execInput(const Stmt &stmt, const std::shared_ptr<Env> &env);
  void execParam(const Stmt &stmt, const std::shared_ptr<Env> &env,
                 Frame &frame);
  void execOutput(const Stmt &stmt, const std::shared_ptr<Env> &env);
  void execRepeat(const Stmt &stmt, const std::shared_ptr<Env> &env,
                  Frame &frame);

public:
  Val callDef(const std::shared_ptr<Closure> &def, CallArgs &args,
              SrcLoc at, const std::string &prefix);
  Val callLayer(Instance &layer, CallArgs &args, SrcLoc at);

private:
  /// Resolves a declared type; `bind` decides what an unknown dimension name
  /// means (batch for inputs, a pattern variable for def arguments).
  enum class UnknownDims { Error, Batch, Bind };
  mlir::FailureOr<std::pair<mlir::Type, Shape>>
  resolveType(const TypeExpr &type, const std::shared_ptr<Env> &env,
              UnknownDims unknown);
  /// Checks `value` against a def argument / result type, binding unknown
  /// dimension names in `env`.
  bool matchType(const TypeExpr &type, const Val &value,
                 const std::shared_ptr<Env> &env, SrcLoc at,
                 const llvm::Twine &what, SrcLoc declared);
  mlir::Type elementTypeNamed(llvm::StringRef name, SrcLoc at);
  mlir::BlockArgument addArgument(mlir::Type type, SrcLoc at,
                                  mlir::NamedAttrList attrs);

  const DslImportOptions &options;
  std::optional<int64_t> trainBatch;
  uint64_t seed;
  mlir::Block *entry = nullptr;
  llvm::SmallVector<mlir::NamedAttrList> argAttrs;
  struct ParamRecord {
    mlir::Value value;
    Shape shape;
    SrcLoc loc;
    bool buffer;
  };
  llvm::StringMap<ParamRecord> params;
  llvm::StringMap<SrcLoc> inputs;
  struct Output {
    std::string name;
    Val value;
    SrcLoc loc;
  };
  std::vector<Output> outputs;
  /// Buffers in declaration order and their values after a training step
  /// (the argument itself unless a built-in updated it).
  struct Buffer {
    std::string name;
    mlir::Value value;
    std::optional<SrcLoc> updatedAt;
  };
  std::vector<Buffer> buffers;
  std::string batchName;
  SrcLoc batchLoc;
  uint64_t paramBytes = 0;
  int callDepth = 0;
  /// Statements executed: bounds the unrolled size of a hostile model.
  uint64_t work = 0;
  bool reusing = false;
  /// Scopes captured by defs (see Env::clear).
  std::vector<std::shared_ptr<Env>> capturedEnvs;
  /// Prefix of the parameters declared now: empty or ends with '.'.
  std::string prefix;
  /// The def calls being inlined, innermost last, for "in call to" notes.
  std::vector<std::pair<std::string, SrcLoc>> callStack;
  mlir::Value randomKey;
  int64_t randomStreams = 0;
  bool budgetReported = false;
  bool batchMissingReported = false;
  bool hadError = false;
};

} // namespace lmc::dsl

#endif // LMC_LIB_IMPORT_DSLEMITTER_H
