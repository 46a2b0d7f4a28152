//===- LmcEnums.td - lmc dialect enumerations --------------*- tablegen -*-===//

#ifndef LMC_ENUMS
#define LMC_ENUMS

include "mlir/IR/EnumAttr.td"

def Lmc_CmpPredicate : I32EnumAttr<"CmpPredicate",
    "lmc.cmp's comparison: ordered for floats except ne (IEEE !=), signed "
    "for integers", [
      I32EnumAttrCase<"eq", 0>,
      I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>,
      I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>,
      I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::lmc";
}

def Lmc_Precision : I32EnumAttr<"Precision",
    "the element type of matmul operands under mixed precision "
    "(lmc-mixed-precision, lmc.precision) or of a frozen base (lmc-lora)", [
      I32EnumAttrCase<"F32", 0, "f32">,
      I32EnumAttrCase<"BF16", 1, "bf16">,
      I32EnumAttrCase<"F16", 2, "f16">]> {
  let cppNamespace = "::lmc";
  // A choice between passes and in lmc.precision's string, not an op's
  // attribute.
  let genSpecializedAttr = 0;
}

#endif // LMC_ENUMS
