/*
 * units.c - the one reader of memory sizes (see units.h); the spec and the
 * devices layers wrap it with their own error messages and positions.
 */
#include "common/units.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Binary multiples for K/M/G/T with or without "i" and for KiB...TiB (the
 * convention of docker --memory, Kubernetes "Gi" and nvidia-smi); the SI
 * spellings KB/MB/GB/TB are decimal.  Factors are bytes. */
static const struct size_unit {
	const char *name;
	double bytes;
} size_units[] = {
	{"b", 1.0},
	{"k", 1024.0}, {"ki", 1024.0}, {"kib", 1024.0}, {"kb", 1e3},
	{"m", 1048576.0}, {"mi", 1048576.0}, {"mib", 1048576.0}, {"mb", 1e6},
	{"g", 1073741824.0}, {"gi", 1073741824.0}, {"gib", 1073741824.0}, {"gb", 1e9},
	{"t", 1099511627776.0}, {"ti", 1099511627776.0}, {"tib", 1099511627776.0}, {"tb", 1e12},
};

size_t units_read_decimal(const char *s, double *v)
{
	size_t i = 0, digits = 0;
	while (isdigit((unsigned char)s[i])) {
		i++;
		digits++;
	}
	if (s[i] == '.') {
		i++;
		while (isdigit((unsigned char)s[i])) {
			i++;
			digits++;
		}
	}
	if (!digits || i > 40)
		return 0;
	char buf[48];
	memcpy(buf, s, i);
	buf[i] = '\0';
	*v = strtod(buf, NULL);
	return i;
}

int units_parse_size_mib(const char *s, uint64_t *out)
{
	if (!s)
		return UNITS_NOT_A_SIZE;
	while (isspace((unsigned char)*s))
		s++;
	double v;
	size_t used = units_read_decimal(s, &v);
	if (!used)
		return UNITS_NOT_A_SIZE;
	const char *u = s + used;
	while (isspace((unsigned char)*u))
		u++;
	double mib;
	if (!*u) {
		mib = v;
	} else {
		size_t i = 0, nu = sizeof size_units / sizeof size_units[0];
		while (i < nu && strcasecmp(u, size_units[i].name))
			i++;
		if (i == nu)
			return UNITS_NOT_A_SIZE;
		mib = v * size_units[i].bytes / 1048576.0;
	}
	/* The tolerance keeps 0.5GiB at 512, not 513 after rounding noise. */
	mib = ceil(mib - 1e-9);
	if (!isfinite(mib) || mib > UNITS_MAX_MIB)
		return UNITS_TOO_LARGE;
	*out = mib < 0 ? 0 : (uint64_t)mib;
	return 0;
}

int units_parse_duration(const char *s, double *out)
{
	static const struct {
		const char *name;
		double factor;
	} units[] = {
		{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400},
	};
	if (!s || !*s)
		return UNITS_NOT_A_SIZE;
	double total = 0, v;
	size_t used = units_read_decimal(s, &v);
	if (used && !s[used]) {
		*out = v; /* a plain number: seconds */
		return 0;
	}
	while (*s) {
		used = units_read_decimal(s, &v);
		if (!used)
			return UNITS_NOT_A_SIZE;
		s += used;
		size_t best = 0;
		double factor = 0;
		for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
			size_t l = strlen(units[i].name);
			if (l > best && !strncmp(s, units[i].name, l) &&
			    !isalpha((unsigned char)s[l])) {
				best = l;
				factor = units[i].factor;
			}
		}
		if (!best)
			return UNITS_NOT_A_SIZE;
		s += best;
		total += v * factor;
	}
	if (!isfinite(total))
		return UNITS_NOT_A_SIZE;
	*out = total;
	return 0;
}
