/*
 * cmd_backup.c - relish backup [--state DIR | --db FILE] [--json] FILE: a
 * consistent copy of a state database while relish serve (or relish run)
 * goes on writing it (store_backup: SQLite's online backup in one read
 * transaction), checked and renamed into place, so FILE is the whole copy
 * or nothing.  The copy opens like any state database: `relish status
 * --db FILE`, or put back in place of the service's with the service
 * stopped (docs/serve.md, "Operating relish serve").
 *
 * Exit status: 0 copied; 1 FILE exists or cannot be written; 3 no such
 * database; 4 the database cannot be read (written by a newer relish,
 * damaged).
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cli_common.h"
#include "serve/serve.h"

static const char usage[] = "relish backup [--state DIR | --db FILE] [--json] FILE";

enum { OPT_STATE = 256, OPT_DB };

int cmd_backup(int argc, char **argv, rl_err *err)
{
	static const struct option opts[] = {
		{"state", required_argument, NULL, OPT_STATE},
		{"db", required_argument, NULL, OPT_DB},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *state = NULL, *db = NULL;
	int json = 0, c;
	cli_getopt_reset();
	while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (c) {
		case OPT_STATE: state = optarg; break;
		case OPT_DB: db = optarg; break;
		case 'j': json = 1; break;
		case 'h':
			printf("usage: %s\n\nA consistent copy of a state database into the new FILE, "
			       "taken while\nrelish serve or relish run goes on writing it (SQLite's "
			       "online backup):\nthe database as of one moment, checked, all or "
			       "nothing.\n  --state DIR   relish serve's state folder (default %s): "
			       "DIR/relish.db\n  --db FILE     a database file (relish run's; default "
			       "without --state: ./%s)\nExit status: 0 copied, 1 FILE exists or "
			       "cannot be written, 3 no such\ndatabase, 4 the database cannot be read "
			       "(newer relish, damaged).\n", usage, SERVE_DEFAULT_STATE,
			       STORE_DEFAULT_PATH);
			return 0;
		case ':':
			return cli_usage_error(err, usage, "option '%s' needs a value", argv[optind - 1]);
		default:
			return cli_usage_error(err, usage, "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cli_usage_error(err, usage, "where to? give the file for the copy");
	if (optind + 1 < argc)
		return cli_usage_error(err, usage, "unexpected argument '%s'", argv[optind + 1]);
	if (db && state)
		return cli_usage_error(err, usage, "--db and --state: one or the other");
	char path[4096];
	if (state)
		snprintf(path, sizeof path, "%s/relish.db", state);
	else
		snprintf(path, sizeof path, "%s", db ? db : STORE_DEFAULT_PATH);
	const char *dest = argv[optind];
	store *st;
	int rc = store_open(path, STORE_READONLY, &st, err);
	if (rc < 0)
		return rc;
	size_t pages = 0;
	double at = (double)time(NULL);
	int version = store_schema_version(st);
	rc = store_backup(st, dest, &pages, err);
	store_close(st);
	if (rc < 0)
		return rc;
	char when[32];
	cli_format_time(at, when, sizeof when);
	if (json) {
		json_t *j = json_pack("{s:s, s:s, s:I, s:i, s:f}", "database", path, "backup", dest,
				      "pages", (json_int_t)pages, "schema_version", version, "at", at);
		return cli_json_print(j, err);
	}
	printf("backed up %s to %s: %zu pages, schema version %d, as of %s\n", path, dest, pages,
	       version, when);
	return 0;
}
