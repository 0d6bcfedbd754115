/*
 * cmd_slurm_step.c - relish slurm-step -- PROGRAM ARGS...: the command a
 * relish Slurm job runs on its node (slurm/slurm.h, docs/slurm.md).  Not for
 * people: relish's job script calls it.  Its exit status is the trial's.
 */
#include "cli/cli.h"
#include "slurm/slurm.h"

int cmd_slurm_step(int argc, char **argv, rl_err *err)
{
	(void)err;
	return slurm_step_main(argc, argv);
}
