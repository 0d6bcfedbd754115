/*
 * table.c - terminal tables that fit (see table.h).
 */
#include "cli/table.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "common/err.h"
#include "common/logtext.h"

#define SEP 2 /* spaces between columns */

struct cli_table {
	const cli_col *cols;
	size_t n_cols;
	char **cells; /* n_rows * n_cols */
	size_t n_rows, cap_rows;
};

size_t cli_text_width(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

cli_table *cli_table_new(const cli_col *cols, size_t n_cols)
{
	cli_table *t = calloc(1, sizeof *t);
	if (t) {
		t->cols = cols;
		t->n_cols = n_cols;
	}
	return t;
}

int cli_table_add(cli_table *t, const char *const *cells)
{
	if (t->n_rows == t->cap_rows) {
		size_t cap = t->cap_rows ? 2 * t->cap_rows : 16;
		char **v = realloc(t->cells, cap * t->n_cols * sizeof *v);
		if (!v)
			return RL_ENOMEM;
		t->cells = v;
		t->cap_rows = cap;
	}
	char **row = t->cells + t->n_rows * t->n_cols;
	for (size_t c = 0; c < t->n_cols; c++) {
		/* cells come from the store or a service: what a trial printed
		 * among them, shown without its control bytes (rl_term_text) */
		const char *v = cells[c] ? cells[c] : "-";
		size_t cap = 4 * strlen(v) + 1;
		row[c] = malloc(cap);
		if (row[c])
			rl_term_text(v, row[c], cap);
		if (!row[c]) {
			for (size_t k = 0; k < c; k++)
				free(row[k]);
			return RL_ENOMEM;
		}
	}
	t->n_rows++;
	return 0;
}

void cli_table_free(cli_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_rows * t->n_cols; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
}

int cli_term_width(int wide)
{
	if (wide)
		return 0;
	const char *c = getenv("COLUMNS");
	if (c && *c) {
		char *end;
		long v = strtol(c, &end, 10);
		if (!*end && v > 0 && v < 100000)
			return (int)v;
	}
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 0;
}

/* Print s in w characters: padded, or cut with an ellipsis. */
static void cell(FILE *f, const char *s, int w, int right, int last)
{
	int n = (int)cli_text_width(s);
	if (n > w) {
		/* w - 1 characters, then "…" */
		int k = 0;
		const char *p = s;
		while (*p && k < w - 1) {
			p++;
			while (((unsigned char)*p & 0xC0) == 0x80)
				p++;
			k++;
		}
		fwrite(s, 1, (size_t)(p - s), f);
		if (w > 0)
			fputs("\xe2\x80\xa6", f);
		return;
	}
	if (right)
		fprintf(f, "%*s%s", w - n, "", s);
	else if (last)
		fputs(s, f);
	else
		fprintf(f, "%s%*s", s, w - n, "");
}

void cli_table_print(const cli_table *t, FILE *f, int width)
{
	size_t nc = t->n_cols;
	int *nat = calloc(nc, sizeof *nat), *w = calloc(nc, sizeof *w);
	int *on = calloc(nc, sizeof *on);
	size_t *order = calloc(nc, sizeof *order);
	if (!nat || !w || !on || !order)
		goto out;
	for (size_t c = 0; c < nc; c++) {
		nat[c] = (int)cli_text_width(t->cols[c].head);
		for (size_t r = 0; r < t->n_rows; r++) {
			int n = (int)cli_text_width(t->cells[r * nc + c]);
			if (n > nat[c])
				nat[c] = n;
		}
		order[c] = c;
	}
	/* Priority order, stable. */
	for (size_t i = 1; i < nc; i++)
		for (size_t j = i; j > 0 && t->cols[order[j]].prio < t->cols[order[j - 1]].prio; j--) {
			size_t tmp = order[j];
			order[j] = order[j - 1];
			order[j - 1] = tmp;
		}
	/* Pass 1: the columns that matter (priority below CLI_PRIO_EXTRA),
	 * cut columns at their minimum; then what is left widens the cut
	 * columns; pass 2: the extras, from what is still left. */
	int used = 0, shown = 0;
	for (int pass = 1; pass <= 2; pass++) {
		for (size_t i = 0; i < nc; i++) {
			size_t c = order[i];
			const cli_col *k = &t->cols[c];
			if ((k->prio >= CLI_PRIO_EXTRA) != (pass == 2))
				continue;
			int need = k->shrink && width > 0 && k->min < nat[c] ? k->min : nat[c];
			if ((int)cli_text_width(k->head) > need)
				need = (int)cli_text_width(k->head);
			int add = need + (shown ? SEP : 0);
			if (width > 0 && used + add > width)
				continue;
			on[c] = 1;
			w[c] = need;
			used += add;
			shown++;
		}
		for (size_t i = 0; width > 0 && i < nc; i++) {
			size_t c = order[i];
			if (!on[c] || w[c] >= nat[c])
				continue;
			int more = nat[c] - w[c];
			if (more > width - used)
				more = width - used;
			w[c] += more;
			used += more;
		}
	}
	size_t last = 0;
	for (size_t c = 0; c < nc; c++)
		if (on[c])
			last = c;
	for (size_t r = 0; r <= t->n_rows; r++) {
		int first = 1;
		for (size_t c = 0; c < nc; c++) {
			if (!on[c])
				continue;
			if (!first)
				fprintf(f, "%*s", SEP, "");
			first = 0;
			const char *s = r == 0 ? t->cols[c].head : t->cells[(r - 1) * nc + c];
			cell(f, s, w[c], t->cols[c].right, c == last);
		}
		fputc('\n', f);
	}
out:
	free(nat);
	free(w);
	free(on);
	free(order);
}
