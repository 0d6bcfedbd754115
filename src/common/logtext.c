/*
 * logtext.c - users' text escaped for the service's log and for terminals (logtext.h):
 * one loop, a rule for each.
 */
#include "common/logtext.h"

#include <stdio.h>

/* One rule: the escape of the bytes at p into esc (at most 8 and a NUL),
 * its length in *k; returns how many bytes of the input it stands for. */
typedef size_t (*escape_fn)(const unsigned char *p, char *esc, size_t *k);

/* in through rule into out (n bytes), cut before an escape that does not
 * fit. */
static char *escape(const char *in, char *out, size_t n, escape_fn rule)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p;) {
		char esc[9];
		size_t k, used = rule(p, esc, &k);
		if (o + k >= n)
			break;
		for (size_t i = 0; i < k; i++)
			out[o++] = esc[i];
		p += used;
	}
	if (n)
		out[o] = '\0';
	return out;
}

/* a log field: '"' and '\\' backslashed, every other byte but printable
 * ASCII as \xHH */
static size_t log_one(const unsigned char *p, char *esc, size_t *k)
{
	if (*p == '"' || *p == '\\') {
		esc[0] = '\\';
		esc[1] = (char)*p;
		*k = 2;
	} else if (*p < 0x20 || *p >= 0x7f) {
		snprintf(esc, 9, "\\x%02x", *p);
		*k = 4;
	} else {
		esc[0] = (char)*p;
		*k = 1;
	}
	return 1;
}

/* a terminal: C0 but newline and tab, DEL and UTF-8's C1 as \xHH */
static size_t term_one(const unsigned char *p, char *esc, size_t *k)
{
	if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) {
		snprintf(esc, 9, "\\x%02x", *p);
		*k = 4;
		return 1;
	}
	if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
		snprintf(esc, 9, "\\x%02x\\x%02x", p[0], p[1]);
		*k = 8;
		return 2;
	}
	esc[0] = (char)*p;
	*k = 1;
	return 1;
}

char *rl_log_text(const char *in, char *out, size_t n)
{
	return escape(in, out, n, log_one);
}

char *rl_term_text(const char *in, char *out, size_t n)
{
	return escape(in, out, n, term_one);
}

char *rl_log_value(const char *in, char *out, size_t n)
{
	const unsigned char *p = (const unsigned char *)(in ? in : "");
	int plain = *p != '\0';
	for (; *p && plain; p++)
		plain = *p > 0x20 && *p < 0x7f && *p != '"' && *p != '\\';
	if (plain || n < 3) {
		snprintf(out, n, "%s", in ? in : "");
		return out;
	}
	out[0] = '"';
	rl_log_text(in, out + 1, n - 2);
	size_t k = 1;
	while (out[k])
		k++;
	out[k] = '"';
	out[k + 1] = '\0';
	return out;
}
