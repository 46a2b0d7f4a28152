//===- Lexer.cpp - tokens of the lmc DSL ----------------------------------===//
//
// Hand-written: one pass over the buffer, `#` comments to the end of the
// line, newlines significant (they end statements) except inside () and [].
//
//===----------------------------------------------------------------------===//

#include "Ast.h"

#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <cstdlib>

using namespace mlir;

namespace lmc::dsl {

namespace {

class Lexer {
public:
  Lexer(MLIRContext *context, StringRef file, StringRef source)
      : context(context), file(file), source(source) {}

  std::vector<Token> run(bool &hadError);

private:
  char peek(size_t ahead = 0) const {
    return pos + ahead < source.size() ? source[pos + ahead] : '\0';
  }
  void advance() {
    if (source[pos] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
    ++pos;
  }
  SrcLoc here() const { return SrcLoc{file, line, col}; }
  void push(Tok kind, std::string text, SrcLoc loc) {
    tokens.push_back(Token{kind, std::move(text), loc});
  }
  void number();
  void string();

  MLIRContext *context;
  StringRef file, source;
  size_t pos = 0;
  unsigned line = 1, col = 1;
  int nesting = 0; // depth of () and []
  bool error = false;
  std::vector<Token> tokens;
};

void Lexer::number() {
  SrcLoc loc = here();
  size_t start = pos;
  bool isFloat = false;
  while (llvm::isDigit(peek()))
    advance();
  if (peek() == '.' && llvm::isDigit(peek(1))) {
    isFloat = true;
    advance();
    while (llvm::isDigit(peek()))
      advance();
  }
  if ((peek() == 'e' || peek() == 'E') &&
      (llvm::isDigit(peek(1)) ||
       ((peek(1) == '+' || peek(1) == '-') && llvm::isDigit(peek(2))))) {
    isFloat = true;
    advance();
    if (peek() == '+' || peek() == '-')
      advance();
    while (llvm::isDigit(peek()))
      advance();
  }
  std::string text = source.substr(start, pos - start).str();
  if (llvm::isAlpha(peek()) || peek() == '_') {
    emitError(loc.get(context)) << "invalid number '" << text << peek() << "'";
    error = true;
    while (llvm::isAlnum(peek()) || peek() == '_')
      advance();
    return;
  }
  if (!isFloat) {
    int64_t value;
    if (StringRef(text).getAsInteger(10, value)) {
      emitError(loc.get(context))
          << "integer literal " << text << " does not fit in 64 bits";
      error = true;
      return;
    }
  }
  push(isFloat ? Tok::Float : Tok::Int, text, loc);
}

void Lexer::string() {
  SrcLoc loc = here();
  advance(); // the opening quote
  size_t start = pos;
  while (peek() != '"' && peek() != '\n' && pos < source.size())
    advance();
  if (peek() != '"') {
    emitError(loc.get(context)) << "unterminated string";
    error = true;
    return;
  }
  std::string text = source.substr(start, pos - start).str();
  advance();
  push(Tok::String, text, loc);
}

std::vector<Token> Lexer::run(bool &hadError) {
  while (pos < source.size()) {
    char c = peek();
    SrcLoc loc = here();
    if (c == '\n') {
      if (nesting == 0 &&
          (tokens.empty() || tokens.back().kind != Tok::Newline))
        push(Tok::Newline, "\\n", loc);
      advance();
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      advance();
      continue;
    }
    if (c == '#') {
      while (pos < source.size() && peek() != '\n')
        advance();
      continue;
    }
    if (llvm::isDigit(c)) {
      number();
      continue;
    }
    if (llvm::isAlpha(c) || c == '_') {
      size_t start = pos;
      while (llvm::isAlnum(peek()) || peek() == '_')
        advance();
      push(Tok::Ident, source.substr(start, pos - start).str(), loc);
      continue;
    }
    if (c == '"') {
      string();
      continue;
    }
    auto two = [&](char second) { return peek(1) == second; };
    Tok kind;
    int length = 1;
    switch (c) {
    case '(': kind = Tok::LParen; ++nesting; break;
    case ')': kind = Tok::RParen; nesting = std::max(0, nesting - 1); break;
    case '[': kind = Tok::LBracket; ++nesting; break;
    case ']': kind = Tok::RBracket; nesting = std::max(0, nesting - 1); break;
    // Blocks never sit inside an expression: a brace ends any unbalanced
    // bracket so that one missing ')' does not swallow the rest of the file.
    case '{': kind = Tok::LBrace; nesting = 0; break;
    case '}': kind = Tok::RBrace; nesting = 0; break;
    case ',': kind = Tok::Comma; break;
    case ':': kind = Tok::Colon; break;
    case '=': kind = Tok::Assign; break;
    case '+': kind = Tok::Plus; break;
    case '-':
      kind = two('>') ? Tok::Arrow : Tok::Minus;
      length = two('>') ? 2 : 1;
      break;
    case '*':
      kind = two('*') ? Tok::StarStar : Tok::Star;
      length = two('*') ? 2 : 1;
      break;
    case '/':
      kind = two('/') ? Tok::SlashSlash : Tok::Slash;
      length = two('/') ? 2 : 1;
      break;
    case '%': kind = Tok::Percent; break;
    case '@': kind = Tok::At; break;
    default: {
      emitError(loc.get(context))
          << "unexpected character '"
          << (llvm::isPrint(c) ? std::string(1, c)
                               : "\\x" + llvm::utohexstr(uint8_t(c), true, 2))
          << "'";
      error = true;
      advance();
      continue;
    }
    }
    std::string text = source.substr(pos, length).str();
    for (int i = 0; i < length; ++i)
      advance();
    push(kind, text, loc);
  }
  push(Tok::Newline, "\\n", here());
  push(Tok::Eof, "", here());
  hadError = error;
  return std::move(tokens);
}

} // namespace

std::vector<Token> lex(MLIRContext *context, StringRef file, StringRef source,
                       bool &hadError) {
  return Lexer(context, file, source).run(hadError);
}

} // namespace lmc::dsl
