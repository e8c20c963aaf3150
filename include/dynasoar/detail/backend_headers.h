// Includes the header of every line of DYNASOAR_BACKEND_LIST (the fifth
// field), so that a back end is its folder plus its one line in
// dynasoar/backend_list.h, with no #include to add beside it.
//
// An #include cannot be made by a macro that loops over a list, but it may
// name a macro that expands to "header" (a computed include). So the
// headers are picked from the list by position, one #include per position,
// for up to DYNASOAR_DETAIL_MAX_BACKENDS lines: DYNASOAR_DETAIL_HEADER_AT(k)
// is the header of line k, or an empty header past the last line (the list
// is padded). A header that several lines name (the CMalloc family's) is
// included once (#pragma once). A list longer than that stops here with a
// message, before any header is left out; to allow more lines, raise the
// maximum and add as many PICK macros, padding entries and #include lines.
#pragma once

// Positions below: PICK_0..PICK_31, 32 padding entries, 32 #include lines.
#define DYNASOAR_DETAIL_MAX_BACKENDS 32
#define DYNASOAR_DETAIL_ONE_LINE(...) +1
#if (0 DYNASOAR_BACKEND_LIST(DYNASOAR_DETAIL_ONE_LINE)) > DYNASOAR_DETAIL_MAX_BACKENDS
#error "dynasoar/backend_list.h has more lines than dynasoar/detail/backend_headers.h includes headers for: add positions there"
#endif
#undef DYNASOAR_DETAIL_ONE_LINE

// The header of a line, followed by a comma.
#define DYNASOAR_DETAIL_HEADER_OF(build_name, name, type, properties, header) header,
// The k-th argument (from 0).
#define DYNASOAR_DETAIL_PICK(k, ...) DYNASOAR_DETAIL_PICK_##k(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_0(a, ...) a
#define DYNASOAR_DETAIL_PICK_1(a, ...) DYNASOAR_DETAIL_PICK_0(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_2(a, ...) DYNASOAR_DETAIL_PICK_1(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_3(a, ...) DYNASOAR_DETAIL_PICK_2(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_4(a, ...) DYNASOAR_DETAIL_PICK_3(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_5(a, ...) DYNASOAR_DETAIL_PICK_4(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_6(a, ...) DYNASOAR_DETAIL_PICK_5(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_7(a, ...) DYNASOAR_DETAIL_PICK_6(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_8(a, ...) DYNASOAR_DETAIL_PICK_7(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_9(a, ...) DYNASOAR_DETAIL_PICK_8(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_10(a, ...) DYNASOAR_DETAIL_PICK_9(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_11(a, ...) DYNASOAR_DETAIL_PICK_10(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_12(a, ...) DYNASOAR_DETAIL_PICK_11(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_13(a, ...) DYNASOAR_DETAIL_PICK_12(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_14(a, ...) DYNASOAR_DETAIL_PICK_13(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_15(a, ...) DYNASOAR_DETAIL_PICK_14(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_16(a, ...) DYNASOAR_DETAIL_PICK_15(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_17(a, ...) DYNASOAR_DETAIL_PICK_16(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_18(a, ...) DYNASOAR_DETAIL_PICK_17(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_19(a, ...) DYNASOAR_DETAIL_PICK_18(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_20(a, ...) DYNASOAR_DETAIL_PICK_19(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_21(a, ...) DYNASOAR_DETAIL_PICK_20(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_22(a, ...) DYNASOAR_DETAIL_PICK_21(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_23(a, ...) DYNASOAR_DETAIL_PICK_22(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_24(a, ...) DYNASOAR_DETAIL_PICK_23(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_25(a, ...) DYNASOAR_DETAIL_PICK_24(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_26(a, ...) DYNASOAR_DETAIL_PICK_25(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_27(a, ...) DYNASOAR_DETAIL_PICK_26(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_28(a, ...) DYNASOAR_DETAIL_PICK_27(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_29(a, ...) DYNASOAR_DETAIL_PICK_28(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_30(a, ...) DYNASOAR_DETAIL_PICK_29(__VA_ARGS__)
#define DYNASOAR_DETAIL_PICK_31(a, ...) DYNASOAR_DETAIL_PICK_30(__VA_ARGS__)
#define DYNASOAR_DETAIL_NONE "dynasoar/detail/no_backend.h"
#define DYNASOAR_DETAIL_HEADER_AT(k) \
  DYNASOAR_DETAIL_PICK(k, DYNASOAR_BACKEND_LIST(DYNASOAR_DETAIL_HEADER_OF) DYNASOAR_DETAIL_PADDING)
#define DYNASOAR_DETAIL_NONE8                                                           \
  DYNASOAR_DETAIL_NONE, DYNASOAR_DETAIL_NONE, DYNASOAR_DETAIL_NONE, DYNASOAR_DETAIL_NONE, \
      DYNASOAR_DETAIL_NONE, DYNASOAR_DETAIL_NONE, DYNASOAR_DETAIL_NONE, DYNASOAR_DETAIL_NONE
// DYNASOAR_DETAIL_MAX_BACKENDS entries.
#define DYNASOAR_DETAIL_PADDING \
  DYNASOAR_DETAIL_NONE8, DYNASOAR_DETAIL_NONE8, DYNASOAR_DETAIL_NONE8, DYNASOAR_DETAIL_NONE8

#include DYNASOAR_DETAIL_HEADER_AT(0)
#include DYNASOAR_DETAIL_HEADER_AT(1)
#include DYNASOAR_DETAIL_HEADER_AT(2)
#include DYNASOAR_DETAIL_HEADER_AT(3)
#include DYNASOAR_DETAIL_HEADER_AT(4)
#include DYNASOAR_DETAIL_HEADER_AT(5)
#include DYNASOAR_DETAIL_HEADER_AT(6)
#include DYNASOAR_DETAIL_HEADER_AT(7)
#include DYNASOAR_DETAIL_HEADER_AT(8)
#include DYNASOAR_DETAIL_HEADER_AT(9)
#include DYNASOAR_DETAIL_HEADER_AT(10)
#include DYNASOAR_DETAIL_HEADER_AT(11)
#include DYNASOAR_DETAIL_HEADER_AT(12)
#include DYNASOAR_DETAIL_HEADER_AT(13)
#include DYNASOAR_DETAIL_HEADER_AT(14)
#include DYNASOAR_DETAIL_HEADER_AT(15)
#include DYNASOAR_DETAIL_HEADER_AT(16)
#include DYNASOAR_DETAIL_HEADER_AT(17)
#include DYNASOAR_DETAIL_HEADER_AT(18)
#include DYNASOAR_DETAIL_HEADER_AT(19)
#include DYNASOAR_DETAIL_HEADER_AT(20)
#include DYNASOAR_DETAIL_HEADER_AT(21)
#include DYNASOAR_DETAIL_HEADER_AT(22)
#include DYNASOAR_DETAIL_HEADER_AT(23)
#include DYNASOAR_DETAIL_HEADER_AT(24)
#include DYNASOAR_DETAIL_HEADER_AT(25)
#include DYNASOAR_DETAIL_HEADER_AT(26)
#include DYNASOAR_DETAIL_HEADER_AT(27)
#include DYNASOAR_DETAIL_HEADER_AT(28)
#include DYNASOAR_DETAIL_HEADER_AT(29)
#include DYNASOAR_DETAIL_HEADER_AT(30)
#include DYNASOAR_DETAIL_HEADER_AT(31)

#undef DYNASOAR_DETAIL_HEADER_AT
#undef DYNASOAR_DETAIL_PADDING
#undef DYNASOAR_DETAIL_NONE
#undef DYNASOAR_DETAIL_HEADER_OF
