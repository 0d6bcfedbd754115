/*
 * outcome.h - how a segment ended, shared by the executors (exec/, which
 * classify an ending), the core (sched/, which learns from it), the store
 * (which keeps its name) and both drivers.  It lives here, below all of
 * them, as the trial states do (common/trial_state.h), so that an executor
 * needs nothing of the scheduling core.  The SEG_OUT_* names are kept
 * from when the enum lived in sched/sched.h: every layer already speaks
 * them, and the core is what they are for.
 *
 * Stored and printed by name (seg_outcome_name): "completed", "failed",
 * "signaled", "oom", "timeout", "cancelled", "lost".
 */
#ifndef RELISH_OUTCOME_H
#define RELISH_OUTCOME_H

typedef enum seg_outcome {
	SEG_OUT_COMPLETED,  /* exited 0 at the end of its segment */
	SEG_OUT_FAILED,     /* non-zero exit */
	SEG_OUT_SIGNALED,   /* killed by a signal it did not ask for */
	SEG_OUT_OOM,        /* out of memory (device or host) */
	SEG_OUT_TIMEOUT,    /* ran past its timeout */
	SEG_OUT_CANCELLED,  /* stopped by relish or the user */
	SEG_OUT_LOST,       /* relish restarted and could not find it */
	SEG_OUT__COUNT
} seg_outcome;

/* The outcome's name; "unknown" for a value outside the enum. */
const char *seg_outcome_name(seg_outcome o);

/* The outcome named s; 0, or RL_EINVAL (nothing written) for another text. */
int seg_outcome_from_name(const char *s, seg_outcome *out);

#endif
