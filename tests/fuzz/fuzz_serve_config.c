/*
 * fuzz_serve_config.c - libFuzzer target for relish serve's config file
 * (serve_config_parse, src/serve/config.c; YAML or JSON): the policy, the
 * users' shares and limits, the grants it allows, its Slurm section.  Not
 * built by default: scripts/fuzz.sh builds and runs it.
 *
 * The first byte chooses the front end (even: YAML, odd: JSON); the rest
 * is the file.  Checked besides the sanitizers: a failure has a message
 * and leaves the defaults (no setting half-read); what parses names its
 * file and keeps its invariants (shares not negative, limits counted).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	const char *name = data[0] & 1 ? "fuzz.json" : "fuzz.yaml";
	serve_config c;
	rl_err err;
	rl_err_clear(&err);
	if (serve_config_parse(s, size - 1, name, &c, &err) == 0) {
		if (!c.path || strcmp(c.path, name))
			abort();
		if (!(c.dflt.share >= 0))
			abort();
		for (size_t i = 0; i < c.n_users; i++)
			if (!(c.users[i].share >= 0))
				abort();
		if (c.n_allow && !c.allow)
			abort();
	} else {
		serve_config d;
		serve_config_default(&d);
		if (!err.msg[0] || c.path || c.n_users || c.n_allow || c.slurm.enabled)
			abort(); /* a failure says why and keeps nothing of the file */
		serve_config_fini(&d);
	}
	serve_config_fini(&c);
	free(s);
	return 0;
}
