/*
 * cli.h - the command table.  Each command lives in cli/cmd_NAME.c and has
 * the signature below: argv[0] is the command name; it returns a
 * non-negative exit code, or a negative RL_E* code with err filled, which
 * main() prints once and maps to an exit code.
 */
#ifndef RELISH_CLI_H
#define RELISH_CLI_H

#include "common/err.h"
#include "common/version.h"

typedef int (*cli_fn)(int argc, char **argv, rl_err *err);

struct cli_command {
	const char *name;
	cli_fn fn;
	const char *help;
};

/* X(name, function, one-line help).  Add a row and a cmd_*.c file. */
#define CLI_COMMANDS(X)                                                        \
	X("version", cmd_version, "print the version")                                 \
	X("validate", cmd_validate, "check an experiment spec (YAML or JSON)")         \
	X("run", cmd_run, "run experiments in the foreground (resumes from the db)")   \
	X("serve", cmd_serve, "the multi-user service: shares this machine's devices") \
	X("submit", cmd_submit, "submit experiments to relish serve")                 \
	X("cancel", cmd_cancel, "cancel an experiment on relish serve")               \
	X("delete", cmd_delete, "remove an ended experiment with its checkpoints and logs") \
	X("status", cmd_status, "experiments: state, trial counts, best so far")       \
	X("trials", cmd_trials, "one row per trial of an experiment")                  \
	X("best", cmd_best, "the best trial: id, params, objective")                   \
	X("logs", cmd_logs, "print the segment logs of a trial")                       \
	X("export", cmd_export, "trials, metrics or segments as CSV or JSON")          \
	X("prune", cmd_prune, "export, then remove ended experiments by age or count per user") \
	X("backup", cmd_backup, "a consistent copy of a state database, while it is in use") \
	X("devices", cmd_devices, "list the devices relish sees and what shares them") \
	X("simulate", cmd_simulate, "replay a job trace and compare sharing policies") \
	X("profiles", cmd_profiles, "measured trial shapes: memory, utilisation, estimate errors") \
	X("slurm-step", cmd_slurm_step, "run one segment on a Slurm node (relish's job script calls it)")

#define CLI_DECL_(name, fn, help) int fn(int argc, char **argv, rl_err *err);
CLI_COMMANDS(CLI_DECL_)
#undef CLI_DECL_

#endif
