// A pass header from the dialect.
#include "lmc/Transforms/Passes.h"
