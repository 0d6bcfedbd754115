/*
 * outcome.c - names of segment outcomes (outcome.h).
 */
#include "common/outcome.h"

#include <string.h>

#include "common/err.h"

static const char *const OUTCOME_NAMES[SCHED_OUT__COUNT] = {
	[SCHED_OUT_COMPLETED] = "completed", [SCHED_OUT_FAILED] = "failed",
	[SCHED_OUT_SIGNALED] = "signaled",   [SCHED_OUT_OOM] = "oom",
	[SCHED_OUT_TIMEOUT] = "timeout",     [SCHED_OUT_CANCELLED] = "cancelled",
	[SCHED_OUT_LOST] = "lost",
};

const char *sched_outcome_name(sched_outcome o)
{
	if ((int)o < 0 || o >= SCHED_OUT__COUNT)
		return "unknown";
	return OUTCOME_NAMES[o];
}

int sched_outcome_from_name(const char *str, sched_outcome *out)
{
	for (int i = 0; str && i < SCHED_OUT__COUNT; i++) {
		if (strcmp(str, OUTCOME_NAMES[i]) == 0) {
			*out = (sched_outcome)i;
			return 0;
		}
	}
	return RL_EINVAL;
}
