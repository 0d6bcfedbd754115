/*
 * main.c - the relish command line: a table of commands, each in its own
 * file (cli/cmd_*.c).  main() is the one place that prints errors and turns
 * error codes into exit codes (docs/cli.md lists them).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/err.h"

static const struct cli_command commands[] = {
#define CLI_ROW_(name, fn, help) {name, fn, help},
	CLI_COMMANDS(CLI_ROW_)
#undef CLI_ROW_
};

static void usage(FILE *f)
{
	fprintf(f, "usage: relish COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrelish COMMAND --help shows a command's options.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("relish %s\n", RELISH_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
		if (strcmp(argv[1], commands[i].name))
			continue;
		rl_err err;
		rl_err_clear(&err);
		int rc = commands[i].fn(argc - 1, argv + 1, &err);
		if (rc < 0) {
			fprintf(stderr, "relish %s: %s\n", commands[i].name,
				err.msg[0] ? err.msg : rl_strerror(rc));
			return rl_err_exit_code(rc);
		}
		return rc;
	}
	fprintf(stderr, "relish: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
