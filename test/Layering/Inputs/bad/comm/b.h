#include "comm/a.h"
