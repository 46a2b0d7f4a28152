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

#endif // LMC_ENUMS
