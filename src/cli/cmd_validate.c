/*
 * cmd_validate.c - relish validate SPEC [--json]: parse and check an
 * experiment spec without running anything.  Exit 0 when valid; otherwise
 * the error (FILE:LINE:COL: key.path: expected X, got Y) goes to stderr
 * through main() and the exit code is 2, whatever went wrong, so scripts
 * can tell "bad spec" from "good spec" with one test.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "spec/spec.h"

static int validate_usage(FILE *f)
{
	fprintf(f, "usage: relish validate SPEC [--json]\n\n"
		   "Checks an experiment spec (YAML, or JSON when the name ends in .json).\n"
		   "  --json   print the normalised spec (every default filled in) as JSON,\n"
		   "           itself a spec: save it as NAME.json and it validates and runs\n"
		   "Exit status: 0 valid, 2 invalid or unreadable.\n");
	return f == stdout ? 0 : 2;
}

int cmd_validate(int argc, char **argv, rl_err *err)
{
	const char *path = NULL;
	int json = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return validate_usage(stdout);
		else if (argv[i][0] == '-' && argv[i][1])
			return rl_err_set(err, RL_EUSAGE, "unknown option '%s' (see relish validate --help)", argv[i]);
		else if (path)
			return rl_err_set(err, RL_EUSAGE, "one spec at a time (got '%s' and '%s')", path, argv[i]);
		else
			path = argv[i];
	}
	if (!path)
		return rl_err_set(err, RL_EUSAGE, "missing SPEC (usage: relish validate SPEC [--json])");

	spec *s = NULL;
	int rc = spec_load(path, &s, err);
	if (rc < 0) {
		/* "2 when invalid": a missing or unreadable file is invalid too. */
		if (rl_err_exit_code(rc) != 2 && rc != RL_ENOMEM)
			err->code = rc = RL_EINVAL;
		return rc;
	}
	if (json) {
		char *text = spec_to_spec_json(s);
		if (!text) {
			spec_free(s);
			return rl_err_set(err, RL_ENOMEM, "formatting the spec");
		}
		printf("%s\n", text);
		free(text);
	} else {
		char grid[64] = "";
		if (s->search.algorithm == SEARCH_GRID)
			snprintf(grid, sizeof grid, " of %llu points",
				 (unsigned long long)spec_grid_size(&s->search.space));
		printf("%s: ok (%zu parameter%s, search %s%s, schedule %s, policy %s)\n", path,
		       s->search.space.n, s->search.space.n == 1 ? "" : "s",
		       spec_search_name(s->search.algorithm), grid,
		       spec_schedule_name(s->schedule.algorithm), sched_policy_name(s->sharing.policy));
		/* What its containers get beyond least privilege (docs/containers.md). */
		size_t n = spec_grants(s, NULL, 0);
		spec_grant *g = n ? calloc(n, sizeof *g) : NULL;
		n = g ? spec_grants(s, g, n) : 0;
		if (n)
			printf("containers get more than least privilege:\n");
		for (size_t i = 0; i < n; i++)
			printf("  %s: %s\n", g[i].key, g[i].value);
		free(g);
	}
	spec_free(s);
	return 0;
}
