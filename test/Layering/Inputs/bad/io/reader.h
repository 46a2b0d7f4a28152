#include "train/loop.h"
