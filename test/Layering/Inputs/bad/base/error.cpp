#include <vector>
#include "base/error.h"
