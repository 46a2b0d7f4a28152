//===- lmc-opt.cpp - mlir-opt with the lmc dialect and passes -------------===//

#include "lmc/Driver/Pipelines.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  lmc::registerLmcDialects(registry);
  lmc::registerLmcPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "lmc optimizer driver\n", registry));
}
