/*
 * cmd_version.c - relish version.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cmd_version(int argc, char **argv, rl_err *err)
{
	if (argc > 1 && !strcmp(argv[1], "--help")) {
		printf("usage: relish version\n\nPrints relish's version (also: relish --version).\n");
		return 0;
	}
	if (argc > 1)
		return rl_err_set(err, RL_EUSAGE, "unexpected argument '%s'\nusage: relish version",
				  argv[1]);
	printf("relish %s\n", RELISH_VERSION);
	return 0;
}
