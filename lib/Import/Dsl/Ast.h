//===- Ast.h - tokens and syntax tree of the lmc DSL ------------*- C++ -*-===//
//
// The lexer (Lexer.cpp) turns a buffer into tokens, the recursive-descent
// parser (Parser.cpp) into this tree; the emitter (Emitter.cpp)
// evaluates the tree and builds the lmc dialect. Every node keeps its source
// position so that diagnostics point at the DSL text.
//
//===----------------------------------------------------------------------===//

#ifndef LMC_LIB_IMPORT_DSLAST_H
#define LMC_LIB_IMPORT_DSLAST_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lmc::dsl {

/// A position in a DSL buffer (1-based line and column).
struct SrcLoc {
  llvm::StringRef file;
  unsigned line = 0, col = 0;
  mlir::Location get(mlir::MLIRContext *context) const {
    return mlir::FileLineColLoc::get(context, file, line, col);
  }
};

enum class Tok {
  Eof, Newline, Ident, Int, Float, String,
  LParen, RParen, LBracket, RBracket, LBrace, RBrace,
  Comma, Colon, Assign, Arrow, Plus, Minus, Star, StarStar, Slash,
  SlashSlash, Percent, At,
};

struct Token {
  Tok kind = Tok::Eof;
  std::string text; // identifier name, number spelling or string contents
  SrcLoc loc;
};

/// Tokenizes `source`; newlines inside (), [] and {} brackets of an
/// expression are dropped so that calls can span lines. Lexical errors are
/// reported on `context` and the offending characters skipped.
std::vector<Token> lex(mlir::MLIRContext *context, llvm::StringRef file,
                       llvm::StringRef source, bool &hadError);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  enum Kind { Int, Float, String, Name, Unary, Binary, Call, List, Tuple };
  Kind kind;
  SrcLoc loc;
  int64_t intValue = 0;
  double floatValue = 0;
  std::string name;            // Name, String, callee of Call, operator
  std::vector<ExprPtr> args;   // operands, call arguments, list items
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<SrcLoc> kwargLocs;
};

/// `f32[B, dim]`: an element type and dimension expressions.
struct TypeExpr {
  SrcLoc loc;
  std::string dtype;
  std::vector<ExprPtr> dims;
};

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;

/// A parameter of a `def`: a tensor (optionally typed), an int or a float.
struct DefArg {
  std::string name;
  SrcLoc loc;
  enum Kind { Any, Int, Float, Tensor } kind = Any;
  std::optional<TypeExpr> type;
};

struct DefDecl {
  std::string name;
  SrcLoc loc;
  std::vector<DefArg> args;
  std::optional<TypeExpr> result;
  std::vector<StmtPtr> body;
};

struct Stmt {
  enum Kind { Input, Param, Output, Assign, Repeat, Return, Def };
  Kind kind;
  SrcLoc loc;
  std::string name;                // declared / assigned name, repeat `as`
  std::optional<TypeExpr> type;    // input, tensor param and buffer
  bool buffer = false;             // a Param declared with `buffer`
  ExprPtr value;                   // initializer, expression, repeat count
  std::vector<StmtPtr> body;       // repeat
  std::shared_ptr<DefDecl> def;    // nested def
};

struct ModelDecl {
  std::string name;
  SrcLoc loc;
  std::vector<std::pair<std::string, ExprPtr>> hyper; // name = default
  std::vector<SrcLoc> hyperLocs;
  std::vector<StmtPtr> body;
};

/// One `key = value` of a train block; mesh/shard keep no value.
struct TrainEntry {
  std::string key;
  SrcLoc loc;
  /// `mesh = { data: 2, model: 2 }` is a Call expression named `mesh` with
  /// keyword arguments; `shard "GLOB" = [...]` keeps GLOB here.
  ExprPtr value;
  std::string pattern;
};

struct Program {
  std::vector<std::shared_ptr<DefDecl>> defs;
  std::vector<std::unique_ptr<ModelDecl>> models;
  std::vector<TrainEntry> train;
  std::optional<SrcLoc> trainLoc;
};

/// Parses `tokens` into `program` (which may already hold the standard
/// library's defs). Reports every syntax error it can recover from; returns
/// failure if there was any.
mlir::LogicalResult parse(mlir::MLIRContext *context,
                          const std::vector<Token> &tokens, Program &program);

} // namespace lmc::dsl

#endif // LMC_LIB_IMPORT_DSLAST_H
