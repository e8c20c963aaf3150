// Umbrella header of the dynasoar framework: include this one.
#pragma once

#include "dynasoar/bitmap/bitmap.h"
#include "dynasoar/bitmap/bitmap_handle.h"
#include "dynasoar/soa_allocator_handle.h"
#include "dynasoar/backend.h"
#include "dynasoar/field.h"
#include "dynasoar/random.h"
#include "dynasoar/soa_allocator.h"
#include "dynasoar/platform/atomic.h"
#include "dynasoar/platform/bits.h"
#include "dynasoar/platform/config.h"
#include "dynasoar/platform/error.h"
#include "dynasoar/platform/executor.h"
#include "dynasoar/platform/memory.h"
#include "dynasoar/platform/stack.h"
#include "dynasoar/platform/warp.h"
