//===- LmcDialect.td - the lmc tensor graph dialect ---------*- tablegen -*-===//

#ifndef LMC_DIALECT_LMC_IR_LMCDIALECT_TD
#define LMC_DIALECT_LMC_IR_LMCDIALECT_TD

include "mlir/IR/OpBase.td"

def Lmc_Dialect : Dialect {
  let name = "lmc";
  let cppNamespace = "::lmc";
  let summary = "Tensor-level training graph with static shapes";
  let description = [{
    The lmc dialect holds the forward graph of a model imported from ONNX or
    the lmc DSL, and everything the training passes derive from it (loss,
    gradients, optimizer update). Ops have value semantics and static shapes;
    broadcasting is explicit (`lmc.broadcast_in_dim`) so that every
    elementwise op sees operands of the result shape.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  // The `lmc.*` attributes the passes exchange (LmcAttributes.h) are
  // checked where they are: a role, a parameter's name and initial value
  // on an entry point's arguments and results; the optimizer and the
  // precision on the module.
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

class Lmc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Lmc_Dialect, mnemonic, traits>;

#endif // LMC_DIALECT_LMC_IR_LMCDIALECT_TD
