// The columns of CSR rows in 16 bits each. The hierarchical operator's rows at a million patches keep some 800 M
// exact entries, and their columns as int32 were a third of what the rows held. A row's columns ascend, so each
// entry keeps the low 16 bits of its column, and each row keeps where among its entries each span of 65536
// columns after the first begins: entry k of span s is column s * 65536 + low[k]. That is 2 bytes an entry and
// 4 bytes per row and span (16 spans at a million patches: 64 bytes a row, against some 1600 saved), and any
// entry is still reached directly, as the GPU's lanes need (each lane reads its row's entries lane, lane +
// stride, ...; RowColumnReader). Scenes of at most 65536 patches have one span and no table.
//
// Written once for the host and the device (RAD_HD): FormFactorRows holds the arrays (form_factor_rows.h), the
// solvers read them through CsrColumnsView.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "util/hd.h"

namespace rad {

constexpr int kColumnSpanBits = 16;
constexpr long long kColumnSpan = 1LL << kColumnSpanBits;

// How many spans of kColumnSpan columns n columns take (at least 1).
RAD_HD RAD_INLINE int ColumnSpans(long long n) {
  return n > kColumnSpan ? int((n + kColumnSpan - 1) >> kColumnSpanBits) : 1;
}

// A rank's rows' columns, in flat arrays (on the host or a device).
struct CsrColumnsView {
  const long long *ptr = nullptr;         // local rows + 1: row r's entries are [ptr[r], ptr[r + 1])
  const uint16_t *low = nullptr;          // per entry: its column's low 16 bits
  const int32_t *spanStart = nullptr;     // per row, spans - 1: where span s = 1, 2, ... begins, from ptr[r]
  int spans = 1;
  // Row r's span table: spanStart's spans - 1 values.
  RAD_HD const int32_t *StartsOf(long long r) const { return spanStart + r * (spans - 1); }
  // Where span s of row r begins (s = 0 .. spans; spans: the row's end), as an entry index.
  RAD_HD long long SpanBegin(long long r, int s) const {
    return s == 0 ? ptr[r] : s >= spans ? ptr[r + 1] : ptr[r] + StartsOf(r)[s - 1];
  }
};

// Appends one row's `count` columns, ascending, to a rank's arrays (host vectors): each column's low 16 bits to
// `low`, and where each span after the first begins, counted from the row's first entry, to `spanStart`.
template <typename LowBits, typename SpanStarts>
void AppendRowColumnsTo(const int32_t *columns, size_t count, int spans, LowBits &low, SpanStarts &spanStart) {
  size_t q = 0;
  for (int s = 1; s < spans; ++s) {
    while (q < count && columns[q] < ((long long)s << kColumnSpanBits)) ++q;
    spanStart.push_back(int32_t(q));
  }
  for (q = 0; q < count; ++q) low.push_back(uint16_t(columns[q] & (kColumnSpan - 1)));
}

// The view of rows over `columns` columns from their arrays.
RAD_HD RAD_INLINE CsrColumnsView ViewColumns(const long long *ptr, const uint16_t *low, const int32_t *spanStart,
                                             long long columns) {
  CsrColumnsView v;
  v.ptr = ptr;
  v.low = low;
  v.spanStart = spanStart;
  v.spans = ColumnSpans(columns);
  return v;
}

// One row's columns, read at entries that do not go back (k, k + stride, ...): each read walks the span table
// forward from where the last one stopped, so a row's reads cost one pass over its table in all.
struct RowColumnReader {
  const CsrColumnsView *view;
  long long row;
  int span = 0;
  long long spanEnd;  // where span `span` ends
  RAD_HD RowColumnReader(const CsrColumnsView &v, long long r) : view(&v), row(r), spanEnd(v.SpanBegin(r, 1)) {}
  RAD_HD int32_t operator()(long long k) {
    while (k >= spanEnd) spanEnd = view->SpanBegin(row, ++span + 1);
    return int32_t(((long long)span << kColumnSpanBits) | view->low[k]);
  }
};

}  // namespace rad
