/*
 * suggest.h - "did you mean": the candidate closest to a mistyped word, for
 * spec keys and values (src/spec) and command names (src/cli), so that both
 * use one rule.
 */
#ifndef RELISH_SUGGEST_H
#define RELISH_SUGGEST_H

#include <stddef.h>

/* Optimal-string-alignment distance (Levenshtein plus adjacent swaps, so
 * "stauts" is one edit from "status"), case-insensitive; (size_t)-1 for
 * words over 64 characters. */
size_t rl_edit_distance(const char *a, const char *b);

/* The candidate closest to word within a third of its length (at least 1,
 * at most 3 edits), the first of equals; NULL when none is that close. */
const char *rl_suggest(const char *word, const char *const *cands, size_t n);

#endif
