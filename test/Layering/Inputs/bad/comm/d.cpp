#include "comm/c.h"
