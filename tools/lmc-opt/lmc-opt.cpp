//===- lmc-opt.cpp - mlir-opt with the lmc dialect and passes -------------===//

#include "lmc/Driver/Pipelines.h"
#include "lmc/Version.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  lmc::registerLmcDialects(registry);
  lmc::registerLmcPasses();
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "lmc-opt: " LMC_VERSION_LINE "\n"; });
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "lmc optimizer driver\n", registry));
}
