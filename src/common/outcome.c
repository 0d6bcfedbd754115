/*
 * outcome.c - names of segment outcomes (outcome.h).
 */
#include "common/outcome.h"

#include <string.h>

#include "common/err.h"

static const char *const OUTCOME_NAMES[SEG_OUT__COUNT] = {
	[SEG_OUT_COMPLETED] = "completed", [SEG_OUT_FAILED] = "failed",
	[SEG_OUT_SIGNALED] = "signaled",   [SEG_OUT_OOM] = "oom",
	[SEG_OUT_TIMEOUT] = "timeout",     [SEG_OUT_CANCELLED] = "cancelled",
	[SEG_OUT_LOST] = "lost",
};

const char *seg_outcome_name(seg_outcome o)
{
	if ((int)o < 0 || o >= SEG_OUT__COUNT)
		return "unknown";
	return OUTCOME_NAMES[o];
}

int seg_outcome_from_name(const char *str, seg_outcome *out)
{
	for (int i = 0; str && i < SEG_OUT__COUNT; i++) {
		if (strcmp(str, OUTCOME_NAMES[i]) == 0) {
			*out = (seg_outcome)i;
			return 0;
		}
	}
	return RL_EINVAL;
}
