/*
 * main.c - the relish command line: a table of commands, each in its own
 * file (cli/cmd_*.c).  main() is the one place that prints errors and turns
 * error codes into exit codes (docs/cli.md lists them).
 *
 * Help works the same for every command: `relish CMD -h`, `relish CMD
 * --help` and `relish help CMD` all run the command with just "--help"
 * (each command prints its usage and options to stdout and returns 0), so a
 * command only has to understand --help.  A mistyped command gets the
 * closest name (common/suggest.h).
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "common/err.h"
#include "common/suggest.h"

static const struct cli_command commands[] = {
#define CLI_ROW_(name, fn, help) {name, fn, help},
	CLI_COMMANDS(CLI_ROW_)
#undef CLI_ROW_
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
	fprintf(f, "usage: relish COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nrelish help COMMAND (or relish COMMAND --help) shows a command's options.\n");
}

static const struct cli_command *find(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* "relish: unknown command 'stauts' (did you mean 'status'?)", exit 2. */
static int unknown(const char *name)
{
	const char *names[N_COMMANDS];
	for (size_t i = 0; i < N_COMMANDS; i++)
		names[i] = commands[i].name;
	const char *s = rl_suggest(name, names, N_COMMANDS);
	if (s)
		fprintf(stderr, "relish: unknown command '%s' (did you mean '%s'?)\n", name, s);
	else
		fprintf(stderr, "relish: unknown command '%s'\n", name);
	fprintf(stderr, "relish --help lists the commands.\n");
	return 2;
}

static int run(const struct cli_command *c, int argc, char **argv)
{
	rl_err err;
	rl_err_clear(&err);
	int rc = c->fn(argc, argv, &err);
	if (rc < 0) {
		fprintf(stderr, "relish %s: %s\n", c->name, err.msg[0] ? err.msg : rl_strerror(rc));
		return rl_err_exit_code(rc);
	}
	return rc;
}

static int help_of(const struct cli_command *c)
{
	char *av[] = {(char *)c->name, "--help", NULL};
	return run(c, 2, av);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		if (argc == 2) {
			usage(stdout);
			return 0;
		}
		const struct cli_command *c = find(argv[2]);
		return c ? help_of(c) : unknown(argv[2]);
	}
	if (!strcmp(name, "--version"))
		name = "version";
	const struct cli_command *c = find(name);
	if (!c)
		return unknown(name);
	/* -h or --help anywhere before "--" asks for the command's help. */
	for (int i = 2; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return help_of(c);
	return run(c, argc - 1, argv + 1);
}
