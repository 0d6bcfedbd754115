/*
 * export_wide.h - `relish export --what wide` (export_wide.c): one row per
 * trial, its parameters and each metric's final value as columns.
 */
#ifndef RELISH_CLI_EXPORT_WIDE_H
#define RELISH_CLI_EXPORT_WIDE_H

#include "cli/cli_source.h"

/* Write the wide table of experiment (NULL: all) from s to stdout, as CSV
 * with a header row or (as_json) one JSON array of objects. */
int export_wide(cli_src *s, const char *experiment, int as_json, rl_err *err);

#endif
