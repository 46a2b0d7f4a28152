//===- Parser.cpp - recursive-descent parser of the lmc DSL ---------------===//
//
// One function per grammar rule (docs/dsl.md has the EBNF). A syntax error
// inside a statement is reported and the parser resynchronizes at the next
// statement, so one run reports every independent mistake.
//
//===----------------------------------------------------------------------===//

#include "Ast.h"

using namespace mlir;

namespace lmc::dsl {

namespace {

class Parser {
public:
  Parser(MLIRContext *context, const std::vector<Token> &tokens)
      : context(context), tokens(tokens) {}

  LogicalResult run(Program &program);

private:
  const Token &cur() const { return tokens[pos]; }
  const Token &next() const {
    return tokens[std::min(pos + 1, tokens.size() - 1)];
  }
  bool at(Tok kind) const { return cur().kind == kind; }
  bool atKeyword(StringRef word) const {
    return at(Tok::Ident) && cur().text == word;
  }
  const Token &take() {
    const Token &t = tokens[pos];
    if (pos + 1 < tokens.size())
      ++pos;
    return t;
  }
  bool accept(Tok kind) {
    if (!at(kind))
      return false;
    take();
    return true;
  }
  /// Reports "expected X, got Y" at the current token.
  InFlightDiagnostic errorHere(const Twine &expected);
  bool expect(Tok kind, const Twine &what) {
    if (accept(kind))
      return true;
    errorHere(what);
    return false;
  }
  void skipNewlines() {
    while (at(Tok::Newline))
      take();
  }
  /// Skips to the end of the current statement: the next newline outside
  /// braces, or the `}` that closes the enclosing block (not consumed).
  void synchronize();
  bool endOfStatement();

  std::shared_ptr<DefDecl> parseDef();
  std::unique_ptr<ModelDecl> parseModel();
  void parseTrain(Program &program);
  bool parseBlock(std::vector<StmtPtr> &body);
  StmtPtr parseStmt();
  std::optional<TypeExpr> parseType();
  /// `{ data: 2, model: 2 }`, as a Call `mesh` with keyword arguments.
  ExprPtr parseMesh() {
    auto mesh = std::make_unique<Expr>();
    mesh->kind = Expr::Call;
    mesh->name = "mesh";
    mesh->loc = cur().loc;
    if (!expect(Tok::LBrace, "'{' (e.g. mesh = { data: 2, model: 2 })"))
      return nullptr;
    while (!accept(Tok::RBrace)) {
      if (!at(Tok::Ident)) {
        errorHere("a mesh axis name");
        return nullptr;
      }
      mesh->kwargLocs.push_back(cur().loc);
      std::string axis = take().text;
      if (!expect(Tok::Colon, "':'"))
        return nullptr;
      ExprPtr size = parseExpr();
      if (!size)
        return nullptr;
      mesh->kwargs.emplace_back(std::move(axis), std::move(size));
      if (!at(Tok::RBrace) && !expect(Tok::Comma, "',' or '}'"))
        return nullptr;
    }
    return mesh;
  }

  ExprPtr parseExpr();
  ExprPtr parseBinary(int minPrecedence);
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  bool parseArgs(Expr &call, Tok close);

  /// Bounds the nesting of expressions and blocks: the parser, the
  /// emitter and the tree's destructor all recurse on it.
  bool enter() {
    if (++depth <= kMaxDepth)
      return true;
    if (!depthReported) {
      failedAny = true;
      emitError(cur().loc.get(context))
          << "nested more than " << kMaxDepth << " levels deep";
    }
    depthReported = true;
    return false;
  }
  static constexpr int kMaxDepth = 200;

  MLIRContext *context;
  const std::vector<Token> &tokens;
  size_t pos = 0;
  int depth = 0;
  bool depthReported = false;
  bool failedAny = false;
};

/// Leaves a nesting level on every path out of a recursive rule.
struct DepthScope {
  int &depth, entered;
  explicit DepthScope(int &depth) : depth(depth), entered(depth) {}
  ~DepthScope() { depth = entered; }
};

static std::string describe(const Token &t) {
  switch (t.kind) {
  case Tok::Eof: return "end of file";
  case Tok::Newline: return "end of line";
  case Tok::Ident: return "'" + t.text + "'";
  case Tok::String: return "string \"" + t.text + "\"";
  default: return "'" + t.text + "'";
  }
}

InFlightDiagnostic Parser::errorHere(const Twine &expected) {
  failedAny = true;
  return emitError(cur().loc.get(context))
         << "expected " << expected << ", got " << describe(cur());
}

void Parser::synchronize() {
  int depth = 0;
  while (!at(Tok::Eof)) {
    if (at(Tok::Newline) && depth == 0)
      return;
    if (at(Tok::LBrace))
      ++depth;
    if (at(Tok::RBrace)) {
      if (depth == 0)
        return;
      --depth;
    }
    take();
  }
}

bool Parser::endOfStatement() {
  if (at(Tok::Newline) || at(Tok::RBrace) || at(Tok::Eof))
    return true;
  errorHere("end of statement");
  synchronize();
  return false;
}

LogicalResult Parser::run(Program &program) {
  while (true) {
    skipNewlines();
    if (at(Tok::Eof))
      break;
    if (atKeyword("def")) {
      if (auto def = parseDef())
        program.defs.push_back(std::move(def));
    } else if (atKeyword("model")) {
      if (auto model = parseModel())
        program.models.push_back(std::move(model));
    } else if (atKeyword("train")) {
      parseTrain(program);
    } else {
      errorHere("'model', 'def' or 'train'");
      synchronize();
      // A stray '}' at top level would stop synchronize forever.
      accept(Tok::RBrace);
    }
  }
  return failure(failedAny);
}

bool Parser::parseBlock(std::vector<StmtPtr> &body) {
  DepthScope scope(depth);
  if (!enter()) {
    synchronize();
    return false;
  }
  if (!expect(Tok::LBrace, "'{'")) {
    synchronize();
    return false;
  }
  while (true) {
    skipNewlines();
    if (accept(Tok::RBrace))
      return true;
    if (at(Tok::Eof)) {
      errorHere("'}'");
      return false;
    }
    if (StmtPtr stmt = parseStmt())
      body.push_back(std::move(stmt));
  }
}

std::shared_ptr<DefDecl> Parser::parseDef() {
  auto def = std::make_shared<DefDecl>();
  def->loc = take().loc; // 'def'
  if (!at(Tok::Ident)) {
    errorHere("a function name");
    synchronize();
    return nullptr;
  }
  def->name = take().text;
  bool ok = expect(Tok::LParen, "'('");
  while (ok && !at(Tok::RParen)) {
    DefArg arg;
    arg.loc = cur().loc;
    if (!at(Tok::Ident)) {
      errorHere("a parameter name");
      ok = false;
      break;
    }
    arg.name = take().text;
    if (accept(Tok::Colon)) {
      if (atKeyword("int") || atKeyword("float")) {
        arg.kind = take().text == "int" ? DefArg::Int : DefArg::Float;
      } else {
        arg.type = parseType();
        if (!arg.type) {
          ok = false;
          break;
        }
        arg.kind = DefArg::Tensor;
      }
    }
    def->args.push_back(std::move(arg));
    if (!accept(Tok::Comma))
      break;
  }
  if (ok)
    ok = expect(Tok::RParen, "',' or ')'");
  if (ok && accept(Tok::Arrow)) {
    def->result = parseType();
    ok = def->result.has_value();
  }
  if (!ok) {
    // Skip the header; still parse the body to find errors inside it.
    while (!at(Tok::LBrace) && !at(Tok::Eof) && !at(Tok::Newline))
      take();
    if (!at(Tok::LBrace))
      return nullptr;
  }
  if (!parseBlock(def->body) || !ok)
    return nullptr;
  return def;
}

std::unique_ptr<ModelDecl> Parser::parseModel() {
  auto model = std::make_unique<ModelDecl>();
  model->loc = take().loc; // 'model'
  if (!at(Tok::Ident)) {
    errorHere("a model name");
    synchronize();
    return nullptr;
  }
  model->name = take().text;
  bool ok = true;
  if (accept(Tok::LParen)) {
    while (ok && !at(Tok::RParen)) {
      SrcLoc loc = cur().loc;
      if (!at(Tok::Ident) || next().kind != Tok::Assign) {
        errorHere("a hyperparameter 'name = value'");
        ok = false;
        break;
      }
      std::string name = take().text;
      take(); // '='
      ExprPtr value = parseExpr();
      if (!value) {
        ok = false;
        break;
      }
      model->hyper.emplace_back(name, std::move(value));
      model->hyperLocs.push_back(loc);
      if (!accept(Tok::Comma))
        break;
    }
    if (ok)
      ok = expect(Tok::RParen, "',' or ')'");
    if (!ok)
      while (!at(Tok::LBrace) && !at(Tok::Eof) && !at(Tok::Newline))
        take();
  }
  if (!parseBlock(model->body) || !ok)
    return nullptr;
  return model;
}

void Parser::parseTrain(Program &program) {
  SrcLoc loc = take().loc; // 'train'
  if (program.trainLoc) {
    failedAny = true;
    InFlightDiagnostic diag = emitError(loc.get(context));
    diag << "a file has at most one train block";
    diag.attachNote(program.trainLoc->get(context)) << "the first one is here";
  }
  program.trainLoc = loc;
  if (!expect(Tok::LBrace, "'{'")) {
    synchronize();
    return;
  }
  while (true) {
    skipNewlines();
    if (accept(Tok::RBrace))
      return;
    if (at(Tok::Eof)) {
      errorHere("'}'");
      return;
    }
    TrainEntry entry;
    entry.loc = cur().loc;
    if (!at(Tok::Ident)) {
      errorHere("a setting name");
      synchronize();
      continue;
    }
    entry.key = take().text;
    if (entry.key == "shard") {
      if (!at(Tok::String)) {
        errorHere("a quoted parameter pattern, e.g. shard \"*.fc.weight\" = "
                  "[_, model]");
        synchronize();
        continue;
      }
      entry.pattern = take().text;
    }
    if (!expect(Tok::Assign, "'='")) {
      synchronize();
      continue;
    }
    entry.value = entry.key == "mesh" ? parseMesh() : parseExpr();
    if (!entry.value) {
      synchronize();
      continue;
    }
    if (endOfStatement())
      program.train.push_back(std::move(entry));
  }
}

StmtPtr Parser::parseStmt() {
  auto stmt = std::make_unique<Stmt>();
  stmt->loc = cur().loc;
  auto fail = [&]() -> StmtPtr {
    synchronize();
    return nullptr;
  };
  auto name = [&](const char *what) {
    if (!at(Tok::Ident)) {
      errorHere(what);
      return false;
    }
    stmt->name = take().text;
    return true;
  };
  if (atKeyword("def")) {
    stmt->kind = Stmt::Def;
    stmt->def = parseDef();
    return stmt->def ? std::move(stmt) : nullptr;
  }
  if (atKeyword("input")) {
    take();
    stmt->kind = Stmt::Input;
    if (!name("an input name") || !expect(Tok::Colon, "':'"))
      return fail();
    stmt->type = parseType();
    if (!stmt->type)
      return fail();
  } else if (atKeyword("param")) {
    take();
    stmt->kind = Stmt::Param;
    if (!name("a parameter name"))
      return fail();
    if (accept(Tok::Colon)) {
      stmt->type = parseType();
      if (!stmt->type)
        return fail();
    }
    if (!expect(Tok::Assign, stmt->type ? "'=' and an initializer"
                                        : "':' and a type, or '=' and a layer"))
      return fail();
    stmt->value = parseExpr();
    if (!stmt->value)
      return fail();
  } else if (atKeyword("buffer")) {
    take();
    stmt->kind = Stmt::Param;
    stmt->buffer = true;
    if (!name("a buffer name") || !expect(Tok::Colon, "':' and a type"))
      return fail();
    stmt->type = parseType();
    if (!stmt->type || !expect(Tok::Assign, "'=' and an initializer"))
      return fail();
    stmt->value = parseExpr();
    if (!stmt->value)
      return fail();
  } else if (atKeyword("output")) {
    take();
    stmt->kind = Stmt::Output;
    if (!name("an output name"))
      return fail();
    if (accept(Tok::Assign)) {
      stmt->value = parseExpr();
      if (!stmt->value)
        return fail();
    }
  } else if (atKeyword("repeat")) {
    take();
    stmt->kind = Stmt::Repeat;
    stmt->value = parseExpr();
    if (!stmt->value)
      return fail();
    if (atKeyword("as")) {
      take();
      if (!name("a name after 'as'"))
        return fail();
    }
    if (!parseBlock(stmt->body))
      return nullptr;
    return stmt;
  } else if (atKeyword("return")) {
    take();
    stmt->kind = Stmt::Return;
    stmt->value = parseExpr();
    if (!stmt->value)
      return fail();
  } else if (at(Tok::Ident) && next().kind == Tok::Assign) {
    stmt->kind = Stmt::Assign;
    stmt->name = take().text;
    take(); // '='
    stmt->value = parseExpr();
    if (!stmt->value)
      return fail();
  } else {
    errorHere("a statement ('input', 'param', 'buffer', 'output', 'repeat', "
              "'return', 'def' or 'name = expression')");
    return fail();
  }
  if (!endOfStatement())
    return nullptr;
  return stmt;
}

std::optional<TypeExpr> Parser::parseType() {
  TypeExpr type;
  type.loc = cur().loc;
  if (!at(Tok::Ident)) {
    errorHere("a tensor type such as f32[B, 64]");
    return std::nullopt;
  }
  type.dtype = take().text;
  if (!expect(Tok::LBracket, "'[' after the element type"))
    return std::nullopt;
  while (!at(Tok::RBracket)) {
    ExprPtr dim = parseExpr();
    if (!dim)
      return std::nullopt;
    type.dims.push_back(std::move(dim));
    if (!accept(Tok::Comma))
      break;
  }
  if (!expect(Tok::RBracket, "',' or ']'"))
    return std::nullopt;
  return type;
}

ExprPtr Parser::parseExpr() { return parseBinary(0); }

/// Binary operator precedence; -1 for tokens that are not binary operators.
static int precedence(Tok kind) {
  switch (kind) {
  case Tok::Plus:
  case Tok::Minus:
    return 1;
  case Tok::Star:
  case Tok::Slash:
  case Tok::SlashSlash:
  case Tok::Percent:
  case Tok::At:
    return 2;
  default:
    return -1;
  }
}

ExprPtr Parser::parseBinary(int minPrecedence) {
  DepthScope scope(depth);
  if (!enter())
    return nullptr;
  ExprPtr lhs = parseUnary();
  while (lhs) {
    // Each operator of a chain deepens the (left-leaning) tree.
    if (precedence(cur().kind) >= minPrecedence && !enter())
      return nullptr;
    int prec = precedence(cur().kind);
    if (prec < 0 || prec < minPrecedence)
      return lhs;
    const Token &op = take();
    ExprPtr rhs = parseBinary(prec + 1);
    if (!rhs)
      return nullptr;
    auto binary = std::make_unique<Expr>();
    binary->kind = Expr::Binary;
    binary->loc = op.loc;
    binary->name = op.text;
    binary->args.push_back(std::move(lhs));
    binary->args.push_back(std::move(rhs));
    lhs = std::move(binary);
  }
  return lhs;
}

ExprPtr Parser::parseUnary() {
  DepthScope scope(depth);
  if (!enter())
    return nullptr;
  if (at(Tok::Minus)) {
    SrcLoc loc = take().loc;
    ExprPtr operand = parseUnary();
    if (!operand)
      return nullptr;
    auto unary = std::make_unique<Expr>();
    unary->kind = Expr::Unary;
    unary->loc = loc;
    unary->name = "-";
    unary->args.push_back(std::move(operand));
    return unary;
  }
  ExprPtr base = parsePostfix();
  if (base && at(Tok::StarStar)) {
    SrcLoc loc = take().loc;
    ExprPtr exponent = parseUnary(); // right-associative, binds tighter
    if (!exponent)
      return nullptr;
    auto power = std::make_unique<Expr>();
    power->kind = Expr::Binary;
    power->loc = loc;
    power->name = "**";
    power->args.push_back(std::move(base));
    power->args.push_back(std::move(exponent));
    return power;
  }
  return base;
}

ExprPtr Parser::parsePostfix() {
  ExprPtr primary = parsePrimary();
  if (!primary || !at(Tok::LParen))
    return primary;
  if (primary->kind != Expr::Name) {
    errorHere("an operator or end of expression");
    return nullptr;
  }
  take(); // '('
  primary->kind = Expr::Call;
  if (!parseArgs(*primary, Tok::RParen))
    return nullptr;
  return primary;
}

bool Parser::parseArgs(Expr &call, Tok close) {
  while (!at(close)) {
    if (at(Tok::Ident) && next().kind == Tok::Assign) {
      SrcLoc loc = cur().loc;
      std::string key = take().text;
      take(); // '='
      ExprPtr value = parseExpr();
      if (!value)
        return false;
      call.kwargs.emplace_back(key, std::move(value));
      call.kwargLocs.push_back(loc);
    } else {
      if (!call.kwargs.empty()) {
        errorHere("a keyword argument (positional arguments come first)");
        return false;
      }
      ExprPtr value = parseExpr();
      if (!value)
        return false;
      call.args.push_back(std::move(value));
    }
    if (!accept(Tok::Comma))
      break;
  }
  return expect(close, close == Tok::RParen ? "',' or ')'" : "',' or ']'");
}

ExprPtr Parser::parsePrimary() {
  auto expr = std::make_unique<Expr>();
  expr->loc = cur().loc;
  switch (cur().kind) {
  case Tok::Int:
    expr->kind = Expr::Int;
    StringRef(take().text).getAsInteger(10, expr->intValue);
    return expr;
  case Tok::Float:
    expr->kind = Expr::Float;
    expr->floatValue = std::strtod(take().text.c_str(), nullptr);
    return expr;
  case Tok::String:
    expr->kind = Expr::String;
    expr->name = take().text;
    return expr;
  case Tok::Ident:
    expr->kind = Expr::Name;
    expr->name = take().text;
    return expr;
  case Tok::LBracket:
    take();
    expr->kind = Expr::List;
    if (!parseArgs(*expr, Tok::RBracket))
      return nullptr;
    if (!expr->kwargs.empty()) {
      failedAny = true;
      emitError(expr->kwargLocs.front().get(context))
          << "a list cannot hold 'name = value' items";
      return nullptr;
    }
    return expr;
  case Tok::LParen: {
    take();
    ExprPtr first = parseExpr();
    if (!first)
      return nullptr;
    if (accept(Tok::RParen))
      return first;
    expr->kind = Expr::Tuple;
    expr->args.push_back(std::move(first));
    while (accept(Tok::Comma)) {
      if (at(Tok::RParen))
        break;
      ExprPtr item = parseExpr();
      if (!item)
        return nullptr;
      expr->args.push_back(std::move(item));
    }
    if (!expect(Tok::RParen, "',' or ')'"))
      return nullptr;
    return expr;
  }
  default:
    errorHere("an expression");
    return nullptr;
  }
}

} // namespace

LogicalResult parse(MLIRContext *context, const std::vector<Token> &tokens,
                    Program &program) {
  return Parser(context, tokens).run(program);
}

} // namespace lmc::dsl
