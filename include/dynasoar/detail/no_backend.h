// Empty: what dynasoar/detail/backend_headers.h includes at the positions
// past the last line of DYNASOAR_BACKEND_LIST.
#pragma once
