/*
 * cmd_version.c - relish version.
 */
#include <stdio.h>

#include "cli/cli.h"

int cmd_version(int argc, char **argv, rl_err *err)
{
	(void)argc;
	(void)argv;
	(void)err;
	printf("relish %s\n", RELISH_VERSION);
	return 0;
}
