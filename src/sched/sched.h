/*
 * sched.h - the core scheduler: queue, devices, placement policy, memory
 * estimator and co-location model.  Pure: no clock (now is an argument), no
 * files, no processes.  The live driver (cli/run, exec/) and the simulator
 * (sim/) feed it the same events and apply the same decisions, which is what
 * makes simulated results say something about live runs.
 *
 * Life of a segment:
 *   driver: sched_submit(request)            -> queued
 *   driver: sched_place(now) -> placements   -> running on a device with a
 *           memory reservation and a compute share
 *   driver: sched_finished(seg, observation) -> reservation released; the
 *           observed peak memory and throughput update the shape's profile
 * An out-of-memory segment is reported with outcome SCHED_OUT_OOM; the driver
 * submits it again (from its checkpoint) and the estimator has already raised
 * the shape's reservation, or marks it exclusive.
 *
 * Ownership: sched_new returns an object freed with sched_free; requests and
 * observations are copied; placements are written into caller memory.
 */
#ifndef RELISH_SCHED_H
#define RELISH_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "common/err.h"
#include "spec/spec.h"

#define SCHED_MAX_FEAT 8
#define SCHED_MAX_GANG 16

typedef struct sched sched;

typedef struct sched_device_info {
	char name[64];          /* "NVIDIA H100 80GB HBM3", "host" */
	char uuid[96];          /* GPU-..., or "host" */
	int is_gpu;
	uint64_t mem_total_mib; /* GPU memory, or host RAM relish may use */
	double compute_total;   /* GPU: 100 (percent); host: number of CPUs */
} sched_device_info;

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

const char *sched_outcome_name(sched_outcome o);
int sched_outcome_from_name(const char *s, sched_outcome *out);

/* Where a reservation came from (reported per placement, kept in the store). */
typedef enum sched_basis {
	SCHED_BASIS_HINT,      /* the user's declared need */
	SCHED_BASIS_PROFILE,   /* measured peak of this shape + margin */
	SCHED_BASIS_FAMILY,    /* estimated from measured shapes of the same command */
	SCHED_BASIS_EXCLUSIVE, /* unknown: runs alone to be measured */
	SCHED_BASIS_OOM,       /* raised after an out-of-memory */
} sched_basis;

const char *sched_basis_name(sched_basis b);

typedef struct sched_request {
	uint64_t seg_id;         /* unique, chosen by the driver */
	uint64_t exp_id;         /* experiment (fairness across experiments) */
	uint64_t shape;          /* hash: command + memory-relevant params */
	uint64_t family;         /* hash: command; shapes of one family share a model */
	size_t n_feat;           /* numeric memory-relevant params (raw values) */
	double feat[SCHED_MAX_FEAT];
	uint64_t mem_hint_mib;   /* declared need, 0 = unknown */
	double compute_hint;     /* declared CPUs (host) or GPU percent; 0 = default */
	int needs_gpu;           /* place on a GPU device */
	int n_devices;           /* > 1: gang of whole devices (multi-GPU job) */
	uint64_t min_mem_mib;    /* floor, e.g. after an out-of-memory; 0 = none */
	int exclusive;           /* must run alone (e.g. OOM with nothing better known) */
	double submit_time;      /* orders the queue (then seg_id) */
} sched_request;

typedef struct sched_placement {
	uint64_t seg_id;
	int n_dev;
	int dev[SCHED_MAX_GANG]; /* device indices from sched_add_device */
	uint64_t mem_mib;        /* reservation on each device */
	double compute;          /* share on each device (CPUs or GPU percent) */
	sched_basis basis;
} sched_placement;

/* What the driver saw of a finished segment. */
typedef struct sched_observation {
	sched_outcome outcome;
	uint64_t peak_mem_mib;   /* measured peak (device memory, or RSS on host); 0 unknown */
	double mean_util;        /* mean compute utilisation (percent of one device), <0 unknown */
	double work;             /* resource units trained (b - a) */
	double duration_s;       /* wall time of the segment */
} sched_observation;

typedef struct sched_options {
	sharing_policy policy;
	double memory_margin;    /* relative headroom on measured peaks (0.2 = +20 %) */
	uint64_t memory_floor_mib; /* absolute headroom added to every estimate */
	double default_compute;  /* compute share when none is declared (1 CPU / 100 %) */
	double min_speedup;      /* relish: admit a co-location only if the
				    modelled total throughput gain exceeds this */
} sched_options;

void sched_options_default(sched_options *o, sharing_policy policy);

int sched_new(const sched_options *opt, sched **out, rl_err *err);
void sched_free(sched *s);

/* Returns the new device's index (>= 0) or a negative error. */
int sched_add_device(sched *s, const sched_device_info *dev, rl_err *err);
size_t sched_device_count(const sched *s);

int sched_submit(sched *s, const sched_request *req, rl_err *err);

/* Remove a queued or running segment (its reservation is released without
 * learning anything).  Returns 1 when found, 0 otherwise. */
int sched_remove(sched *s, uint64_t seg_id);

/*
 * Place queued segments that fit now, in queue order (earlier submit_time
 * first; a segment that does not fit does not block smaller ones behind it).
 * Writes at most max placements into out and returns how many.  Placed
 * segments are running from the core's point of view until sched_finished
 * or sched_remove.
 */
size_t sched_place(sched *s, double now, sched_placement *out, size_t max);

/* A running segment ended: release its reservation and learn from obs. */
int sched_finished(sched *s, uint64_t seg_id, double now,
		   const sched_observation *obs, rl_err *err);

/* Tell the core about a segment that is already running (recovery after a
 * restart: the driver found it alive and adopted it). */
int sched_adopt(sched *s, const sched_request *req, const sched_placement *pl,
		rl_err *err);

/* Read-only views for status displays and tests. */
typedef struct sched_device_state {
	sched_device_info info;
	uint64_t mem_reserved_mib;
	double compute_reserved;
	size_t n_running;
} sched_device_state;

int sched_device_get(const sched *s, int dev, sched_device_state *out);
size_t sched_queue_length(const sched *s);
size_t sched_running_count(const sched *s);

/* The memory the core would reserve for req right now, and on what basis. */
uint64_t sched_estimate_mem(const sched *s, const sched_request *req,
			    sched_basis *basis);

/* Seed the profile of a shape with an earlier measurement (from the store). */
void sched_learn(sched *s, const sched_request *req, const sched_observation *obs);

#endif
