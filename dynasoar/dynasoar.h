// Umbrella header of the dynasoar framework: include this one.
#pragma once

#include "bitmap/bitmap_ref.h"
#include "bitmap/hierarchical_bitmap.h"
#include "dynasoar/allocator_handle.h"
#include "dynasoar/backend.h"
#include "dynasoar/field.h"
#include "dynasoar/random.h"
#include "dynasoar/soa_allocator.h"
#include "platform/atomic.h"
#include "platform/bits.h"
#include "platform/config.h"
#include "platform/error.h"
#include "platform/executor.h"
#include "platform/memory.h"
#include "platform/stack.h"
#include "platform/warp.h"
