#include "comm/b.h"
