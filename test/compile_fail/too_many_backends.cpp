// expect: more lines than dynasoar/detail/backend_headers.h includes headers for
//
// A list of back ends longer than the positions whose headers
// dynasoar/detail/backend_headers.h includes would leave the last headers
// out, and the build would fail later where their types are named. It stops
// at the list instead, saying where to add positions.
#define DYNASOAR_BACKEND_LIST(X) \
  X(b0, B0, Bytes<T0>, frees, "dynasoar/detail/no_backend.h") \
  X(b1, B1, Bytes<T1>, frees, "dynasoar/detail/no_backend.h") \
  X(b2, B2, Bytes<T2>, frees, "dynasoar/detail/no_backend.h") \
  X(b3, B3, Bytes<T3>, frees, "dynasoar/detail/no_backend.h") \
  X(b4, B4, Bytes<T4>, frees, "dynasoar/detail/no_backend.h") \
  X(b5, B5, Bytes<T5>, frees, "dynasoar/detail/no_backend.h") \
  X(b6, B6, Bytes<T6>, frees, "dynasoar/detail/no_backend.h") \
  X(b7, B7, Bytes<T7>, frees, "dynasoar/detail/no_backend.h") \
  X(b8, B8, Bytes<T8>, frees, "dynasoar/detail/no_backend.h") \
  X(b9, B9, Bytes<T9>, frees, "dynasoar/detail/no_backend.h") \
  X(b10, B10, Bytes<T10>, frees, "dynasoar/detail/no_backend.h") \
  X(b11, B11, Bytes<T11>, frees, "dynasoar/detail/no_backend.h") \
  X(b12, B12, Bytes<T12>, frees, "dynasoar/detail/no_backend.h") \
  X(b13, B13, Bytes<T13>, frees, "dynasoar/detail/no_backend.h") \
  X(b14, B14, Bytes<T14>, frees, "dynasoar/detail/no_backend.h") \
  X(b15, B15, Bytes<T15>, frees, "dynasoar/detail/no_backend.h") \
  X(b16, B16, Bytes<T16>, frees, "dynasoar/detail/no_backend.h") \
  X(b17, B17, Bytes<T17>, frees, "dynasoar/detail/no_backend.h") \
  X(b18, B18, Bytes<T18>, frees, "dynasoar/detail/no_backend.h") \
  X(b19, B19, Bytes<T19>, frees, "dynasoar/detail/no_backend.h") \
  X(b20, B20, Bytes<T20>, frees, "dynasoar/detail/no_backend.h") \
  X(b21, B21, Bytes<T21>, frees, "dynasoar/detail/no_backend.h") \
  X(b22, B22, Bytes<T22>, frees, "dynasoar/detail/no_backend.h") \
  X(b23, B23, Bytes<T23>, frees, "dynasoar/detail/no_backend.h") \
  X(b24, B24, Bytes<T24>, frees, "dynasoar/detail/no_backend.h") \
  X(b25, B25, Bytes<T25>, frees, "dynasoar/detail/no_backend.h") \
  X(b26, B26, Bytes<T26>, frees, "dynasoar/detail/no_backend.h") \
  X(b27, B27, Bytes<T27>, frees, "dynasoar/detail/no_backend.h") \
  X(b28, B28, Bytes<T28>, frees, "dynasoar/detail/no_backend.h") \
  X(b29, B29, Bytes<T29>, frees, "dynasoar/detail/no_backend.h") \
  X(b30, B30, Bytes<T30>, frees, "dynasoar/detail/no_backend.h") \
  X(b31, B31, Bytes<T31>, frees, "dynasoar/detail/no_backend.h") \
  X(b32, B32, Bytes<T32>, frees, "dynasoar/detail/no_backend.h")
#include "dynasoar/detail/backend_headers.h"

int main() { return 0; }
