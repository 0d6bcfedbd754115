/*
 * fuzz_container_ps.c - libFuzzer target for what relish reads from a
 * container engine at start-up: `podman ps -a --format json` (a JSON array)
 * and docker's `ps -a --format '{{json .}}'` (one object per line), parsed
 * by container_parse_ps (src/container/container.c) to find what an
 * earlier relish left.  Not built by default: scripts/fuzz.sh builds and
 * runs it.
 *
 * The first byte chooses the label prefix (relish's or another); the rest
 * is the text.  Checked besides the sanitizers: a failure says why and
 * hands back nothing; every field of what parses ends inside it.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "container/container.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	container_info *v = NULL;
	size_t n = 0;
	rl_err err;
	rl_err_clear(&err);
	int rc = container_parse_ps(s, data[0] & 1 ? "x.y" : NULL, &v, &n, &err);
	if (rc == 0) {
		if (n && !v)
			abort();
		for (size_t i = 0; i < n; i++)
			if (!TERMINATED(v[i].name) || !TERMINATED(v[i].id) || !TERMINATED(v[i].state) ||
			    !TERMINATED(v[i].experiment) || !TERMINATED(v[i].trial) ||
			    !TERMINATED(v[i].segment) || !TERMINATED(v[i].mode))
				abort();
		free(v);
	} else if (!err.msg[0] || v) {
		abort();
	}
	free(s);
	return 0;
}
