//===- RuntimeCalls.cpp - calls from lowered code into the lmc runtime ----===//

#include "RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;

namespace lmc {

func::FuncOp declareRuntimeFunction(ModuleOp module, OpBuilder &b,
                                    StringRef name, FunctionType type) {
  if (auto func = module.lookupSymbol<func::FuncOp>(name))
    return func;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  auto func = func::FuncOp::create(b, module.getLoc(), name, type);
  func.setPrivate();
  return func;
}

Value bufferPointer(OpBuilder &b, Location loc, Value buffer) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value i64 = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), i64);
}

MemRefType denseBufferType(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

Value readOnlyPointer(OpBuilder &b, Location loc, Value tensor) {
  if (!tensor)
    return LLVM::ZeroOp::create(b, loc,
                                LLVM::LLVMPointerType::get(b.getContext()));
  return bufferPointer(b, loc,
                       bufferization::ToBufferOp::create(
                           b, loc, denseBufferType(tensor.getType()), tensor,
                           /*read_only=*/true));
}

Value constantTable(OpBuilder &b, Location loc, ModuleOp module, StringRef name,
                    ArrayRef<int64_t> values) {
  auto type = MemRefType::get({int64_t(values.size())}, b.getI64Type());
  auto init = DenseIntElementsAttr::get(
      RankedTensorType::get(type.getShape(), b.getI64Type()), values);
  OpBuilder detached(b.getContext());
  auto table = memref::GlobalOp::create(
      detached, loc, name, b.getStringAttr("private"), type, init,
      /*constant=*/true, /*alignment=*/IntegerAttr());
  SymbolTable(module).insert(table, module.getBody()->begin());
  Value address = memref::GetGlobalOp::create(b, loc, type, table.getName());
  return bufferPointer(b, loc, address);
}

} // namespace lmc
