/*
 * units.h - memory sizes written as text ("4GiB", "1.5G", "512"), read the
 * same way wherever a user writes one: the experiment spec (memory,
 * gpu_memory), the devices file and RELISH_HOST_MEMORY.  The rules are the
 * ones docs/spec.md documents ("Values with units").
 */
#ifndef RELISH_UNITS_H
#define RELISH_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Results of units_parse_size_mib besides 0. */
#define UNITS_NOT_A_SIZE (-1) /* not a number with a known unit */
#define UNITS_TOO_LARGE (-2)  /* more than UNITS_MAX_MIB */

/* The largest size accepted: 1 PiB, surely a mistake beyond. */
#define UNITS_MAX_MIB 1073741824.0

/*
 * Read the leading unsigned decimal number of s (digits with an optional
 * fraction, at most 40 characters; no sign, no exponent) into *v.  Returns
 * the characters used, or 0 when s does not start with one (*v untouched).
 * Also the number reader of durations (spec_util.c).
 */
size_t units_read_decimal(const char *s, double *v);

/*
 * Parse a size into MiB.  Grammar: optional leading blanks, a decimal number
 * (digits with an optional fraction; no sign, no exponent), optional blanks,
 * an optional unit; nothing after.  A plain number is MiB; K, Ki, KiB, M, Mi,
 * MiB, G, Gi, GiB, T, Ti, TiB are binary (1024-based); KB, MB, GB, TB are
 * decimal (1000-based); B is bytes; case does not matter.  The result is
 * rounded up to whole MiB (a fraction of a MiB is a MiB).
 * Returns 0 with *out set, UNITS_NOT_A_SIZE or UNITS_TOO_LARGE (*out
 * untouched).  s may be NULL (not a size).
 */
int units_parse_size_mib(const char *s, uint64_t *out);

/*
 * Parse a duration into seconds: one or more decimal numbers each with a
 * unit, ms, s, m, h or d ("90s", "5m", "1h30m", "7d"), or a plain number
 * of seconds; nothing else, no blanks.  Returns 0 with *out set, or
 * UNITS_NOT_A_SIZE (*out untouched).  The spec, relish serve's config and
 * the CLI's --since read durations this way.
 */
int units_parse_duration(const char *s, double *out);

#endif
