/*
 * logtext.c - values escaped for the service's log (logtext.h).
 */
#include "common/logtext.h"

#include <stdio.h>

char *rl_log_text(const char *in, char *out, size_t n)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p; p++) {
		char esc[5];
		size_t k;
		if (*p == '"' || *p == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*p;
			k = 2;
		} else if (*p < 0x20 || *p >= 0x7f) {
			snprintf(esc, sizeof esc, "\\x%02x", *p);
			k = 4;
		} else {
			esc[0] = (char)*p;
			k = 1;
		}
		if (o + k >= n)
			break;
		for (size_t i = 0; i < k; i++)
			out[o++] = esc[i];
	}
	out[o] = '\0';
	return out;
}

char *rl_term_text(const char *in, char *out, size_t n)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)(in ? in : ""); *p; p++) {
		char esc[9];
		size_t k;
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f) {
			snprintf(esc, sizeof esc, "\\x%02x", *p);
			k = 4;
		} else if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) {
			snprintf(esc, sizeof esc, "\\x%02x\\x%02x", p[0], p[1]);
			k = 8;
			p++;
		} else {
			esc[0] = (char)*p;
			k = 1;
		}
		if (o + k >= n)
			break;
		for (size_t i = 0; i < k; i++)
			out[o++] = esc[i];
	}
	if (n)
		out[o] = '\0';
	return out;
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
