/*
 * fuzz_serve_admit.c - libFuzzer target for relish serve's grant check
 * (serve_admit, src/serve/config.c): a config's allow: list against what
 * a spec asks for (spec_grants: a network, capabilities, a user, new
 * privileges, mounts).  Not built by default: scripts/fuzz.sh builds and
 * runs it; fuzz_replay_serve_admit replays the seeds and regression inputs.
 *
 * The input: byte 0 chooses the spec's front end (bit 0: JSON) and the
 * user (bit 1: root); then the config's text (its users: entries'
 * allow: lists are that user's grants: root's own, or default's), a line "%%", the spec's
 * text (no "%%": a config allowing a network and mounts, all of it spec).
 * The spec is read as a service reads it (spec_origin: no environment, no
 * path resolved).  Checked besides the sanitizers, against a plain
 * re-reading of the rule: a spec admitted has every grant allowed (an
 * allow: entry equal to its key, or to KEY=VALUE), and a spec refused has
 * one that is not, and a message that says so.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve.h"
#include "spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int in_list(char *const *allow, size_t n, const spec_grant *g)
{
	size_t kl = strlen(g->key);
	for (size_t i = 0; i < n; i++) {
		const char *a = allow[i];
		if (!strcmp(a, g->key))
			return 1;
		if (!strncmp(a, g->key, kl) && a[kl] == '=' && !strcmp(a + kl + 1, g->value))
			return 1;
	}
	return 0;
}

/* everyone's allow: list, or the user's own (users.NAME.allow; the
 * default entry's for a user without one) */
static int plainly_allowed(const serve_config *c, uid_t uid, const spec_grant *g)
{
	if (!strcmp(g->key, "trial.privileges.writable_root"))
		return 1;
	const serve_user_rule *r = &c->dflt;
	for (size_t i = 0; i < c->n_users; i++)
		if (c->users[i].uid == uid)
			r = &c->users[i];
	return in_list(c->allow, c->n_allow, g) || in_list(r->allow, r->n_allow, g);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > (1u << 20))
		return 0;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	const char *conf = "allow: [trial.network, trial.mounts]\n", *text = s;
	char *cut = strstr(s, "\n%%\n");
	if (cut) {
		*cut = '\0';
		conf = s;
		text = cut + 4;
	}
	serve_config c;
	rl_err err;
	rl_err_clear(&err);
	if (serve_config_parse(conf, strlen(conf), "fuzz.yaml", &c, &err) < 0) {
		free(s);
		return 0;
	}
	spec *sp = NULL;
	spec_origin origin = {0};
	rl_err_clear(&err);
	if (spec_parse_text_from(text, strlen(text), data[0] & 1 ? "fuzz.json" : "fuzz.yaml", "/",
				 data[0] & 1, &origin, &sp, &err) == 0) {
		api_user u = {.via = API_VIA_UNIX, .uid = data[0] & 2 ? 0 : 1000,
			      .root = !!(data[0] & 2)};
		strcpy(u.name, u.root ? "root" : "fuzz");
		size_t n = spec_grants(sp, NULL, 0);
		spec_grant *g = n ? calloc(n, sizeof *g) : NULL;
		if (n && !g)
			abort();
		spec_grants(sp, g, n);
		size_t refused = 0;
		for (size_t i = 0; i < n; i++)
			refused += !plainly_allowed(&c, u.uid, &g[i]);
		rl_err_clear(&err);
		int rc = serve_admit(&c, &u, sp, &err);
		if (rc == 0 && refused)
			abort(); /* admitted with a grant the config does not allow */
		if (rc < 0 && (rc != RL_EPERM || !refused || !err.msg[0]))
			abort(); /* refused without a grant to refuse, or silently */
		free(g);
		spec_free(sp);
	}
	serve_config_fini(&c);
	free(s);
	return 0;
}
