#include "comm/d.h"
