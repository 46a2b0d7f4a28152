#include "lmc/runtime/optimizers.h"
