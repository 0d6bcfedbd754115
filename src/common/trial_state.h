/*
 * trial_state.h - the states of a trial, shared by the experiment engine
 * (search/engine.h: trial_state) and the store (store/store.h: trial_status,
 * the same enum under the store's name), so the live driver, which uses
 * both, sees one set of TRIAL_* names with one meaning.  Stored as names
 * ("pending", "running", ...): engine_state_name / trial_status_name.
 */
#ifndef RELISH_TRIAL_STATE_H
#define RELISH_TRIAL_STATE_H

typedef enum trial_state {
	TRIAL_PENDING,   /* next segment waits to be (re)run: never started, or
			  * interrupted / failed and requeued, or awaiting the
			  * driver's retry decision after a failed segment */
	TRIAL_RUNNING,   /* a segment is planned or running */
	TRIAL_PAUSED,    /* passed a boundary; its next segment waits for a slot */
	TRIAL_COMPLETED, /* trained to schedule.max */
	TRIAL_STOPPED,   /* stopped early by the schedule (ASHA, median, ...) */
	TRIAL_FAILED,    /* given up after errors */
	TRIAL_CANCELLED, /* its experiment ended before it did (cancelled, stopped
			  * failing fast, relish run interrupted): set by the
			  * driver in the store only, never by the engine, which
			  * restores it as pending, so a resumed experiment
			  * re-runs it from its last boundary */
	TRIAL_N_STATES
} trial_state;

#endif
