#include "lmc/Dialect/Lmc/IR/LmcOps.h"
#include "lmc/Driver/Pipelines.h"
