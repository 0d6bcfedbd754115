/*
 * outcome.h - how a segment ended, shared by the executors (exec/, which
 * classify an ending), the core (sched/, which learns from it), the store
 * (which keeps its name) and both drivers.  It lives here, below all of
 * them, as the trial states do (common/trial_state.h), so that an executor
 * needs nothing of the scheduling core.  The SCHED_OUT_* names are kept
 * from when the enum lived in sched/sched.h: every layer already speaks
 * them, and the core is what they are for.
 *
 * Stored and printed by name (sched_outcome_name): "completed", "failed",
 * "signaled", "oom", "timeout", "cancelled", "lost".
 */
#ifndef RELISH_OUTCOME_H
#define RELISH_OUTCOME_H

typedef enum sched_outcome {
	SCHED_OUT_COMPLETED,  /* exited 0 at the end of its segment */
	SCHED_OUT_FAILED,     /* non-zero exit */
	SCHED_OUT_SIGNALED,   /* killed by a signal it did not ask for */
	SCHED_OUT_OOM,        /* out of memory (device or host) */
	SCHED_OUT_TIMEOUT,    /* ran past its timeout */
	SCHED_OUT_CANCELLED,  /* stopped by relish or the user */
	SCHED_OUT_LOST,       /* relish restarted and could not find it */
	SCHED_OUT__COUNT
} sched_outcome;

/* The outcome's name; "unknown" for a value outside the enum. */
const char *sched_outcome_name(sched_outcome o);

/* The outcome named s; 0, or RL_EINVAL (nothing written) for another text. */
int sched_outcome_from_name(const char *s, sched_outcome *out);

#endif
