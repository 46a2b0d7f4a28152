//===- Emitter.cpp - statements, defs and parameters of the lmc DSL -------===//
//
// Builds `func.func @forward`: inputs and parameters become tagged block
// arguments as they are declared, outputs the tagged results. Defs are
// inlined at every call, so a layer used in a `repeat N as NAME` body gets
// parameters named NAME.<i>.<layer>.<param>.
//
//===----------------------------------------------------------------------===//

#include "Emitter.h"

#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Dialect/Lmc/IR/LmcAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/CheckedArithmetic.h"

using namespace mlir;

namespace lmc::dsl {

/// Bounds on what a (possibly hostile) model may unroll to.
constexpr uint64_t kMaxStatements = uint64_t(1) << 20;
constexpr int kMaxCallDepth = 64;
/// Elements of one declared tensor.
constexpr int64_t kMaxElements = int64_t(1) << 40;

std::string formatType(Type elementType, ArrayRef<Dim> shape) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (elementType.isF32())
    os << "f32";
  else if (elementType.isInteger(64))
    os << "i64";
  else if (elementType.isInteger(32))
    os << "i32";
  else if (elementType.isInteger(1))
    os << "bool";
  else
    os << elementType;
  os << "[";
  llvm::interleave(
      shape,
      [&](const Dim &d) {
        if (d.name.empty())
          os << d.size;
        else
          os << d.name;
      },
      [&] { os << ","; });
  os << "]";
  return text;
}

SmallVector<int64_t> sizes(ArrayRef<Dim> shape) {
  return llvm::map_to_vector(shape, [](const Dim &d) { return d.size; });
}

std::string Val::describe() const {
  switch (kind) {
  case Poison: return "an erroneous value";
  case Int: return "the integer " + std::to_string(i);
  case Float: return "a number";
  case Str: return "a string";
  case Tensor: return formatType(elementType(), shape);
  case List: return "a list";
  case Def: return "a function";
  case Layer: return "a layer";
  }
  return "";
}

Val *Env::lookup(StringRef name) {
  for (Env *env = this; env; env = env->parent.get())
    if (Val *v = env->lookupLocal(name))
      return v;
  return nullptr;
}

void Env::assign(StringRef name, Val value) {
  for (Env *env = this; env; env = env->parent.get()) {
    if (Val *v = env->lookupLocal(name)) {
      *v = std::move(value);
      return;
    }
    if (env->functionBoundary)
      break;
  }
  vars[name] = std::move(value);
}

/// The source text of a simple dimension expression, for messages.
static std::string spell(const Expr &e) {
  switch (e.kind) {
  case Expr::Int: return std::to_string(e.intValue);
  case Expr::Name: return e.name;
  case Expr::Binary:
    return spell(*e.args[0]) + " " + e.name + " " + spell(*e.args[1]);
  case Expr::Unary: return "-" + spell(*e.args[0]);
  default: return "...";
  }
}

static std::string spell(const TypeExpr &type) {
  std::string text = type.dtype + "[";
  for (auto [i, dim] : llvm::enumerate(type.dims))
    text += (i ? "," : "") + spell(*dim);
  return text + "]";
}

Emitter::Emitter(MLIRContext &context, const DslImportOptions &options,
                 std::optional<int64_t> trainBatch, uint64_t seed)
    : context(context), b(&context), options(options),
      trainBatch(trainBatch), seed(seed) {}

InFlightDiagnostic Emitter::error(SrcLoc at) {
  hadError = true;
  InFlightDiagnostic diag = emitError(loc(at));
  for (auto &[name, site] : llvm::reverse(callStack))
    diag.attachNote(loc(site)) << "in call to '" << name << "'";
  return diag;
}

void Emitter::noteDeclared(InFlightDiagnostic &diag, const Val &value,
                           StringRef what) {
  if (value.declared)
    diag.attachNote(loc(*value.declared)) << what << " declared here";
}

Type Emitter::elementTypeNamed(StringRef name, SrcLoc at) {
  if (name == "f32")
    return b.getF32Type();
  if (name == "i64")
    return b.getI64Type();
  if (name == "i32")
    return b.getI32Type();
  if (name == "bf16" || name == "f16" || name == "f64") {
    error(at) << "element type '" << name
              << "' is not supported yet; declare f32 tensors";
    return nullptr;
  }
  error(at) << "unknown element type '" << name << "'; expected f32, i64 or i32";
  return nullptr;
}

FailureOr<std::pair<Type, Shape>>
Emitter::resolveType(const TypeExpr &type, const std::shared_ptr<Env> &env,
                     UnknownDims unknown) {
  Type elementType = elementTypeNamed(type.dtype, type.loc);
  if (!elementType)
    return failure();
  Shape shape;
  int64_t elements = 1;
  for (const ExprPtr &dimExpr : type.dims) {
    Dim dim;
    if (dimExpr->kind == Expr::Name && !env->lookup(dimExpr->name)) {
      const std::string &name = dimExpr->name;
      if (unknown != UnknownDims::Batch) {
        error(dimExpr->loc) << "unknown dimension '" << name << "'";
        return failure();
      }
      if (batchName.empty()) {
        batchName = name;
        batchLoc = dimExpr->loc;
      } else if (batchName != name) {
        InFlightDiagnostic diag = error(dimExpr->loc);
        diag << "unknown dimension '" << name
             << "': only one dimension, the batch dimension '" << batchName
             << "', may be left unbound";
        diag.attachNote(loc(batchLoc)) << "batch dimension named here";
        return failure();
      }
      int64_t batch = options.batch > 0 ? options.batch : trainBatch.value_or(0);
      if (batch <= 0) {
        if (batchMissingReported) // once per model, not per input
          return failure();
        batchMissingReported = true;
        error(dimExpr->loc)
            << "dimension '" << name
            << "' is the batch dimension but no batch size is set; add "
               "'batch = N' to the train block or pass --batch N";
        return failure();
      }
      dim = Dim{batch, name};
      // Later declarations and expressions may use the name as a number.
      Val size = Val::ofInt(batch);
      size.declared = dimExpr->loc;
      env->define(name, size);
    } else {
      Val v = eval(*dimExpr, env);
      if (v.kind == Val::Poison)
        return failure();
      if (v.kind != Val::Int) {
        error(dimExpr->loc) << "a dimension must be an integer, got "
                            << v.describe();
        return failure();
      }
      if (v.i <= 0) {
        error(dimExpr->loc) << "a dimension must be positive, got " << v.i;
        return failure();
      }
      dim = Dim{v.i, dimExpr->kind == Expr::Name ? dimExpr->name : ""};
    }
    std::optional<int64_t> product = llvm::checkedMul(elements, dim.size);
    if (!product || *product > kMaxElements) {
      error(type.loc) << "type " << spell(type) << " has too many elements";
      return failure();
    }
    elements = *product;
    shape.push_back(dim);
  }
  return std::make_pair(elementType, shape);
}

bool Emitter::matchType(const TypeExpr &type, const Val &value,
                        const std::shared_ptr<Env> &env, SrcLoc at,
                        const Twine &what, SrcLoc declared) {
  Type elementType = elementTypeNamed(type.dtype, type.loc);
  if (!elementType)
    return false;
  std::string reason;
  if (elementType != value.elementType())
    reason = "element types differ";
  else if (type.dims.size() != value.shape.size())
    reason = "ranks differ";
  for (size_t i = 0; reason.empty() && i < type.dims.size(); ++i) {
    const Expr &dimExpr = *type.dims[i];
    int64_t actual = value.shape[i].size;
    if (dimExpr.kind == Expr::Name && !env->lookup(dimExpr.name)) {
      // A new name binds to the argument's size (and may be used below).
      Val bound = Val::ofInt(actual);
      env->define(dimExpr.name, bound);
      continue;
    }
    Val expected = eval(dimExpr, env);
    if (expected.kind == Val::Poison)
      return false;
    if (expected.kind != Val::Int) {
      error(dimExpr.loc) << "a dimension must be an integer, got "
                         << expected.describe();
      return false;
    }
    if (expected.i != actual) {
      reason = "dimension " + std::to_string(i) + " is " +
               std::to_string(actual) + ", expected ";
      if (dimExpr.kind != Expr::Int)
        reason += spell(dimExpr) + " = ";
      reason += std::to_string(expected.i);
    }
  }
  if (reason.empty())
    return true;
  InFlightDiagnostic diag = error(at);
  diag << what << " has type " << value.describe() << ", expected "
       << spell(type) << " (" << reason << ")";
  diag.attachNote(loc(declared)) << "declared here";
  return false;
}

BlockArgument Emitter::addArgument(Type type, SrcLoc at,
                                   NamedAttrList attrs) {
  argAttrs.push_back(std::move(attrs));
  return entry->addArgument(type, loc(at));
}

Value Emitter::rngKey(SrcLoc at) {
  if (!randomKey) {
    NamedAttrList attrs;
    attrs.set(attrs::kRngKey, b.getUnitAttr());
    randomKey =
        addArgument(RankedTensorType::get({}, b.getI64Type()), at, attrs);
  }
  return randomKey;
}

void Emitter::execBody(const std::vector<StmtPtr> &body,
                       const std::shared_ptr<Env> &env, Frame &frame) {
  for (const StmtPtr &stmt : body) {
    if (frame.result) {
      error(stmt->loc) << "statement after 'return' is never executed";
      return;
    }
    if (++work > kMaxStatements) {
      if (!budgetReported)
        error(stmt->loc) << "the model unrolls to more than "
                         << kMaxStatements << " statements";
      budgetReported = true;
      return;
    }
    exec(*stmt, env, frame);
  }
}

void Emitter::exec(const Stmt &stmt, const std::shared_ptr<Env> &env,
                   Frame &frame) {
  switch (stmt.kind) {
  case Stmt::Input:
  case Stmt::Output:
    if (!frame.isModel) {
      error(stmt.loc) << "'" << (stmt.kind == Stmt::Input ? "input" : "output")
                      << "' declarations belong in the model body";
      return;
    }
    return stmt.kind == Stmt::Input ? execInput(stmt, env)
                                    : execOutput(stmt, env);
  case Stmt::Param:
    return execParam(stmt, env, frame);
  case Stmt::Assign:
    env->assign(stmt.name, eval(*stmt.value, env));
    return;
  case Stmt::Repeat:
    return execRepeat(stmt, env, frame);
  case Stmt::Return:
    if (frame.isModel) {
      error(stmt.loc) << "'return' belongs in a def; a model declares "
                         "'output NAME = EXPRESSION'";
      return;
    }
    frame.result = eval(*stmt.value, env);
    return;
  case Stmt::Def: {
    Val def;
    def.kind = Val::Def;
    def.def = std::make_shared<Closure>(Closure{stmt.def, env});
    capturedEnvs.push_back(env);
    def.declared = stmt.loc;
    env->define(stmt.def->name, def);
    return;
  }
  }
}

void Emitter::execInput(const Stmt &stmt, const std::shared_ptr<Env> &env) {
  if (auto it = inputs.find(stmt.name); it != inputs.end()) {
    InFlightDiagnostic diag = error(stmt.loc);
    diag << "input '" << stmt.name << "' is already declared";
    diag.attachNote(loc(it->second)) << "previous declaration here";
    return;
  }
  inputs[stmt.name] = stmt.loc;
  FailureOr<std::pair<Type, Shape>> type =
      resolveType(*stmt.type, env, UnknownDims::Batch);
  if (failed(type)) {
    env->define(stmt.name, Val::poison());
    return;
  }
  NamedAttrList attrs;
  attrs.set(attrs::kInput, b.getStringAttr(stmt.name));
  BlockArgument arg = addArgument(
      RankedTensorType::get(sizes(type->second), type->first), stmt.loc,
      attrs);
  Val value = Val::ofTensor(arg, type->second);
  value.declared = stmt.loc;
  env->define(stmt.name, value);
}

void Emitter::execParam(const Stmt &stmt, const std::shared_ptr<Env> &env,
                        Frame &) {
  std::string fullName = prefix + stmt.name;
  const Expr &init = *stmt.value;
  if (!stmt.type) {
    // `param NAME = def(args)`: a layer whose parameters live under NAME.
    Val *callee = init.kind == Expr::Call ? env->lookup(init.name) : nullptr;
    if (!callee || callee->kind != Val::Def) {
      error(init.loc) << "parameter '" << stmt.name
                      << "' needs a type ('param NAME: f32[...] = "
                         "INITIALIZER') or a layer ('param NAME = def(...)')";
      env->define(stmt.name, Val::poison());
      return;
    }
    auto layer = std::make_shared<Instance>();
    layer->def = callee->def;
    layer->prefix = fullName;
    layer->loc = stmt.loc;
    bool poisoned = false;
    for (const ExprPtr &arg : init.args) {
      layer->args.push_back(eval(*arg, env));
      poisoned |= layer->args.back().kind == Val::Poison;
    }
    if (!init.kwargs.empty()) {
      error(init.kwargLocs.front())
          << "a layer declaration binds leading arguments by position";
      poisoned = true;
    }
    Val value;
    if (!poisoned) {
      value.kind = Val::Layer;
      value.layer = layer;
      value.declared = stmt.loc;
    }
    env->define(stmt.name, value);
    return;
  }

  StringRef what = stmt.buffer ? "buffer" : "parameter";
  FailureOr<std::pair<Type, Shape>> type =
      resolveType(*stmt.type, env, UnknownDims::Error);
  if (failed(type)) {
    env->define(stmt.name, Val::poison());
    return;
  }
  if (!isa<FloatType>(type->first)) {
    error(stmt.type->loc) << what << " '" << stmt.name
                          << "' must be a float tensor, got "
                          << formatType(type->first, type->second);
    env->define(stmt.name, Val::poison());
    return;
  }
  if (reusing) {
    // A layer called again shares the parameters of its first call.
    if (auto it = params.find(fullName); it != params.end()) {
      if (!it->second.value) { // its first declaration failed
        env->define(stmt.name, Val::poison());
        return;
      }
      Val value = Val::ofTensor(it->second.value, it->second.shape);
      value.declared = it->second.loc;
      if (it->second.buffer)
        value.buffer = fullName;
      env->define(stmt.name, value);
      return;
    }
  }
  if (auto it = params.find(fullName); it != params.end()) {
    InFlightDiagnostic diag = error(stmt.loc);
    diag << what << " '" << fullName << "' is already defined";
    diag.attachNote(loc(it->second.loc))
        << "previous definition here (give each repetition its own "
           "parameters with 'repeat N as NAME', or declare a layer with "
           "'param NAME = def(...)')";
    env->define(stmt.name, Val::poison());
    return;
  }
  params[fullName] = ParamRecord{Value(), type->second, stmt.loc, stmt.buffer};
  auto tensorType = RankedTensorType::get(sizes(type->second), type->first);
  uint64_t bytes = uint64_t(tensorType.getNumElements()) *
                   (tensorType.getElementTypeBitWidth() / 8);
  paramBytes += bytes;
  if (options.maxParamBytes && paramBytes > options.maxParamBytes) {
    if (!budgetReported)
      error(stmt.loc) << "the model's parameters need more than "
                      << options.maxParamBytes
                      << " bytes (" << what << " '" << fullName
                      << "' crosses the budget); raise it with "
                         "--max-param-bytes";
    budgetReported = true;
    env->define(stmt.name, Val::poison());
    return;
  }
  FailureOr<DenseElementsAttr> initial =
      initializer(init, env, tensorType, fullName);
  if (failed(initial)) {
    env->define(stmt.name, Val::poison());
    return;
  }
  NamedAttrList attrs;
  attrs.set(stmt.buffer ? attrs::kBuffer : attrs::kParam,
            b.getStringAttr(fullName));
  attrs.set(attrs::kInit, *initial);
  BlockArgument arg = addArgument(tensorType, stmt.loc, attrs);
  params[fullName].value = arg;
  Val value = Val::ofTensor(arg, type->second);
  value.declared = stmt.loc;
  if (stmt.buffer) {
    value.buffer = fullName;
    buffers.push_back(Buffer{fullName, arg, std::nullopt});
  }
  env->define(stmt.name, value);
}

LogicalResult Emitter::updateBuffer(const Val &buffer, Value updated, SrcLoc at,
                                    StringRef what) {
  auto it = llvm::find_if(buffers, [&](const Buffer &known) {
    return !buffer.buffer.empty() && known.name == buffer.buffer;
  });
  if (it == buffers.end()) {
    InFlightDiagnostic diag = error(at);
    diag << what << " must be a buffer (declared with 'buffer NAME: "
         << "f32[...] = INITIALIZER'), got " << buffer.describe();
    noteDeclared(diag, buffer, "it is");
    return failure();
  }
  if (it->updatedAt) {
    InFlightDiagnostic diag = error(at);
    diag << "buffer '" << it->name
         << "' is already updated in this step (a layer with buffers can be "
            "applied once)";
    diag.attachNote(loc(*it->updatedAt)) << "first update here";
    return failure();
  }
  it->value = updated;
  it->updatedAt = at;
  return success();
}

void Emitter::execOutput(const Stmt &stmt, const std::shared_ptr<Env> &env) {
  for (const Output &output : outputs) {
    if (output.name != stmt.name)
      continue;
    InFlightDiagnostic diag = error(stmt.loc);
    diag << "output '" << stmt.name << "' is already declared";
    diag.attachNote(loc(output.loc)) << "previous declaration here";
    return;
  }
  Val value;
  if (stmt.value) {
    value = eval(*stmt.value, env);
    env->assign(stmt.name, value);
  } else if (Val *existing = env->lookup(stmt.name)) {
    value = *existing;
  } else {
    error(stmt.loc) << "unknown name '" << stmt.name
                    << "' (write 'output " << stmt.name
                    << " = EXPRESSION' to define it)";
    return;
  }
  if (value.kind == Val::Poison)
    return;
  if (value.kind != Val::Tensor) {
    error(stmt.loc) << "output '" << stmt.name << "' must be a tensor, got "
                    << value.describe();
    return;
  }
  outputs.push_back(Output{stmt.name, value, stmt.loc});
}

void Emitter::execRepeat(const Stmt &stmt, const std::shared_ptr<Env> &env,
                         Frame &frame) {
  Val count = eval(*stmt.value, env);
  if (count.kind == Val::Poison)
    return;
  if (count.kind != Val::Int || count.i < 0) {
    error(stmt.value->loc)
        << "a repeat count must be a non-negative integer, got "
        << count.describe();
    return;
  }
  std::string outer = prefix;
  for (int64_t i = 0; i < count.i && !frame.result; ++i) {
    if (!stmt.name.empty())
      prefix = outer + stmt.name + "." + std::to_string(i) + ".";
    execBody(stmt.body, std::make_shared<Env>(env, false), frame);
    if (budgetReported)
      break;
  }
  prefix = outer;
}

Val Emitter::callDef(const std::shared_ptr<Closure> &def, CallArgs &args,
                     SrcLoc at, const std::string &paramPrefix) {
  const DefDecl &decl = *def->decl;
  auto noteDefined = [&](InFlightDiagnostic &diag) {
    diag.attachNote(loc(decl.loc)) << "'" << decl.name << "' is defined here";
  };
  if (callDepth >= kMaxCallDepth) {
    error(at) << "calls nest deeper than " << kMaxCallDepth << " (is '"
              << decl.name << "' recursive?)";
    return Val::poison();
  }
  size_t arity = decl.args.size();
  if (args.positional.size() > arity) {
    InFlightDiagnostic diag = error(at);
    diag << "'" << decl.name << "' takes " << arity << " argument"
         << (arity == 1 ? "" : "s") << ", got " << args.positional.size();
    noteDefined(diag);
    return Val::poison();
  }
  std::vector<std::optional<Val>> bound(arity);
  std::vector<SrcLoc> locs(arity, at);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    bound[i] = args.positional[i];
    locs[i] = args.positionalLocs[i];
  }
  bool ok = true;
  for (auto [i, kw] : llvm::enumerate(args.keyword)) {
    const auto &name = kw.first; // clang 14 cannot capture a binding
    auto it = llvm::find_if(decl.args,
                            [&](const DefArg &a) { return a.name == name; });
    if (it == decl.args.end()) {
      InFlightDiagnostic diag = error(args.keywordLocs[i]);
      diag << "'" << decl.name << "' has no parameter named '" << kw.first
           << "'";
      noteDefined(diag);
      ok = false;
      continue;
    }
    size_t index = it - decl.args.begin();
    if (bound[index]) {
      error(args.keywordLocs[i])
          << "argument '" << kw.first << "' is given twice";
      ok = false;
      continue;
    }
    bound[index] = kw.second;
    locs[index] = args.keywordLocs[i];
  }
  for (size_t i = 0; ok && i < arity; ++i) {
    if (bound[i])
      continue;
    InFlightDiagnostic diag = error(at);
    diag << "missing argument '" << decl.args[i].name << "' in call to '"
         << decl.name << "'";
    noteDefined(diag);
    ok = false;
  }
  if (!ok)
    return Val::poison();

  auto callee = std::make_shared<Env>(def->env, true);
  for (size_t i = 0; i < arity; ++i) {
    const DefArg &arg = decl.args[i];
    Val value = *bound[i];
    if (value.kind == Val::Poison)
      return Val::poison();
    std::string what =
        "argument '" + arg.name + "' of '" + decl.name + "'";
    auto mismatch = [&](StringRef expected) {
      InFlightDiagnostic diag = error(locs[i]);
      diag << what << " must be " << expected << ", got " << value.describe();
      diag.attachNote(loc(arg.loc)) << "declared here";
      ok = false;
    };
    switch (arg.kind) {
    case DefArg::Int:
      if (value.kind != Val::Int)
        mismatch("an integer");
      break;
    case DefArg::Float:
      if (!value.isNumber())
        mismatch("a number");
      else
        value = Val::ofFloat(value.number());
      break;
    case DefArg::Tensor:
      if (value.kind != Val::Tensor)
        mismatch("a tensor");
      else if (!matchType(*arg.type, value, callee, locs[i], what, arg.loc))
        ok = false;
      break;
    case DefArg::Any:
      break;
    }
    if (!ok)
      return Val::poison();
    callee->define(arg.name, value);
  }

  ++callDepth;
  callStack.emplace_back(decl.name, at);
  std::string outerPrefix = prefix;
  prefix = paramPrefix;
  Frame frame{/*isModel=*/false, std::nullopt};
  execBody(decl.body, callee, frame);
  prefix = outerPrefix;
  callStack.pop_back();
  --callDepth;

  if (!frame.result) {
    if (!budgetReported) {
      InFlightDiagnostic diag = error(at);
      diag << "'" << decl.name
           << "' returns no value; end its body with 'return EXPRESSION'";
      noteDefined(diag);
    }
    return Val::poison();
  }
  Val result = *frame.result;
  if (decl.result && result.kind == Val::Tensor &&
      !matchType(*decl.result, result, callee, at,
                 "the result of '" + decl.name + "'", decl.result->loc))
    return Val::poison();
  if (decl.result && result.isNumber()) {
    error(at) << "'" << decl.name << "' is declared to return a tensor but "
              << "returns " << result.describe();
    return Val::poison();
  }
  return result;
}

Val Emitter::callLayer(Instance &layer, CallArgs &args, SrcLoc at) {
  CallArgs all;
  all.positional = layer.args;
  all.positionalLocs.assign(layer.args.size(), layer.loc);
  llvm::append_range(all.positional, args.positional);
  llvm::append_range(all.positionalLocs, args.positionalLocs);
  all.keyword = args.keyword;
  all.keywordLocs = args.keywordLocs;
  bool outerReusing = reusing;
  reusing = reusing || layer.called;
  layer.called = true;
  Val result = callDef(layer.def, all, at, layer.prefix + ".");
  reusing = outerReusing;
  return result;
}

OwningOpRef<ModuleOp> Emitter::run(const Program &program,
                                   const ModelDecl &model) {
  context.loadDialect<arith::ArithDialect, func::FuncDialect, LmcDialect>();
  Location modelLoc = loc(model.loc);
  OwningOpRef<ModuleOp> module = ModuleOp::create(modelLoc);
  b.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(b, modelLoc, attrs::kForward,
                                   b.getFunctionType({}, {}));
  entry = func.addEntryBlock();
  b.setInsertionPointToEnd(entry);

  // Top-level defs: the user's file may replace a standard-library def.
  auto global = std::make_shared<Env>(nullptr, true);
  capturedEnvs.push_back(global);
  for (const std::shared_ptr<DefDecl> &decl : program.defs) {
    if (Val *previous = global->lookupLocal(decl->name)) {
      if (previous->def->decl->loc.file == decl->loc.file) {
        InFlightDiagnostic diag = error(decl->loc);
        diag << "'" << decl->name << "' is already defined";
        diag.attachNote(loc(previous->def->decl->loc))
            << "previous definition here";
        continue;
      }
    }
    Val def;
    def.kind = Val::Def;
    def.def = std::make_shared<Closure>(Closure{decl, global});
    def.declared = decl->loc;
    global->define(decl->name, def);
  }

  auto modelEnv = std::make_shared<Env>(global, true);
  for (auto [index, hyper] : llvm::enumerate(model.hyper)) {
    Val value = eval(*hyper.second, global);
    if (value.kind != Val::Poison && !value.isNumber()) {
      error(model.hyperLocs[index])
          << "hyperparameter '" << hyper.first << "' must be a number, got "
          << value.describe();
      value = Val::poison();
    }
    value.declared = model.hyperLocs[index];
    modelEnv->define(hyper.first, value);
  }
  Frame frame{/*isModel=*/true, std::nullopt};
  execBody(model.body, modelEnv, frame);
  if (outputs.empty() && !hadError)
    error(model.loc) << "model '" << model.name
                     << "' has no outputs; declare one with 'output NAME = "
                        "EXPRESSION'";
  if (hadError)
    return nullptr;

  SmallVector<Value> results;
  for (const Output &output : outputs)
    results.push_back(output.value.value);
  for (const Buffer &buffer : buffers)
    results.push_back(buffer.value);
  func::ReturnOp::create(b, modelLoc, results);
  // Drop what the model computed but never used (and transposes that were
  // folded into matmuls), innermost users first.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setFunctionType(b.getFunctionType(entry->getArgumentTypes(),
                                         ValueRange(results).getTypes()));
  for (auto [i, attrs] : llvm::enumerate(argAttrs))
    func.setArgAttrs(i, attrs.getDictionary(&context));
  for (auto [i, output] : llvm::enumerate(outputs))
    func.setResultAttr(i, attrs::kOutput, b.getStringAttr(output.name));
  for (auto [i, buffer] : llvm::enumerate(buffers))
    func.setResultAttr(outputs.size() + i, attrs::kBuffer,
                       b.getStringAttr(buffer.name));
  return module;
}

} // namespace lmc::dsl
