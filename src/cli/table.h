/*
 * table.h - the read commands' tables on a terminal: columns chosen and cut
 * to fit its width, so a row never wraps.
 *
 * Every column has a natural width (its widest cell or header).  Columns
 * are taken in the order of their priority while they fit; a column marked
 * `shrink` (parameters, errors: long free text) may be cut down to its
 * `min` width, its cells ending in an ellipsis.  Columns of priority
 * CLI_PRIO_EXTRA and above come only after the cut columns got their full
 * width (the details --wide shows).  Width 0 means no limit:
 * every column at its natural width (a pipe, `--wide`).  Shown columns keep
 * their table order.  Widths are counted in characters (UTF-8 aware).
 */
#ifndef RELISH_CLI_TABLE_H
#define RELISH_CLI_TABLE_H

#include <stddef.h>
#include <stdio.h>

#define CLI_PRIO_EXTRA 4

typedef struct cli_col {
	const char *head;
	int right;   /* right-aligned (numbers) */
	int prio;    /* lower is kept first; equal priorities keep table order */
	int shrink;  /* may be cut to min characters */
	int min;     /* shrink: the narrowest it gets */
} cli_col;

typedef struct cli_table cli_table;

/* cols is borrowed (a static table); NULL when out of memory. */
cli_table *cli_table_new(const cli_col *cols, size_t n_cols);
/* Append a row of n_cols cells (copied; NULL prints as "-").  0 or RL_ENOMEM. */
int cli_table_add(cli_table *t, const char *const *cells);
/* Print the header and rows to f within width characters (0: no limit). */
void cli_table_print(const cli_table *t, FILE *f, int width);
void cli_table_free(cli_table *t); /* NULL accepted */

/*
 * The width tables on stdout should fit: COLUMNS when set to a number, else
 * the terminal's width when stdout is one, else 0 (no limit: a pipe gets
 * every column in full).  wide (--wide) gives 0 always.
 */
int cli_term_width(int wide);

/* Characters of s (UTF-8 code points), the width a terminal gives it. */
size_t cli_text_width(const char *s);

#endif
