#include "lmc/Import/Dsl/Dsl.h"
#include "lmc/runtime/descriptor_lines.h"
#include "lmc/Version.h"
