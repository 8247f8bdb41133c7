/*
 * csv_field.h — field k of one op_summary.csv line, for the profiler tests'
 * own reading of the CSV (quoted fields hold commas: "f32[2,3];f32[3]").
 */
#ifndef VINCI_TEST_CSV_FIELD_H
#define VINCI_TEST_CSV_FIELD_H

#include <stdbool.h>
#include <stddef.h>

/* Field k of a CSV line, copied into buf (empty past the line's end). */
static inline void csv_field(const char *line, int k, char *buf, size_t size)
{
    size_t n = 0;
    bool q = false;
    for (int idx = 0; *line && *line != '\n' && idx <= k; line++) {
        if (*line == '"')
            q = !q;
        else if (*line == ',' && !q)
            idx++;
        else if (idx == k && n + 1 < size)
            buf[n++] = *line;
    }
    buf[n] = 0;
}

#endif /* VINCI_TEST_CSV_FIELD_H */
