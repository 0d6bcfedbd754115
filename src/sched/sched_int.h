/*
 * sched_int.h - internals shared by the four parts of the core scheduler:
 * sched.c (queue, devices, lifecycle), place.c (placement policies),
 * estimate.c (profiles and the memory estimator) and colocate.c (the
 * co-location model).  Not part of the public interface: drivers include
 * sched.h only.
 */
#ifndef RELISH_SCHED_INT_H
#define RELISH_SCHED_INT_H

#include "sched/sched.h"

/* ---- a small open-addressing map from a pair of words to an index ----- */
typedef struct sched_map_slot {
	uint64_t a, b;
	size_t val;   /* index + 1; 0 = empty */
} sched_map_slot;

typedef struct sched_map {
	sched_map_slot *slot;
	size_t cap;   /* power of two or 0 */
	size_t n;
} sched_map;

/* Returns the stored index or (size_t)-1. */
size_t sched__map_get(const sched_map *m, uint64_t a, uint64_t b);
/* Insert or overwrite; 0 or RL_ENOMEM. */
int sched__map_put(sched_map *m, uint64_t a, uint64_t b, size_t val);
/* Remove when present (backward-shift deletion, no tombstones). */
void sched__map_del(sched_map *m, uint64_t a, uint64_t b);
void sched__map_fini(sched_map *m);

/* The least CPU share a host segment counts for in a user's cpus limit:
 * the kernel's least CFS quota (1 ms per 100 ms period), what a trial
 * declaring less gets anyway; counted as declared, 0.0001 CPUs each would
 * let a user run 100 times its limit. */
#define SCHED_CPU_LEAST 0.01

/* A partner that overlapped a segment for at most this fraction of its
 * life is noise, not sharing: the tail of a neighbour that ends a few
 * milliseconds after the segment started, or the start-up of one that
 * begins just before it ends.  A segment with no more than that is alone
 * (sched_finished), and the co-location model attributes what it measured
 * to its other partners (colo_observe). */
#define SCHED_OVERLAP_NOISE 0.05

#define SCHED_NONE ((size_t)-1)
#define SCHED_PSHAPES 4

/* A set of shapes as bits (a shape sets one of 256, colocate.c): the
 * shapes a shape was observed beside, and the paired members of a device.
 * Two sets that share no bit share no shape, so no pair joins them. */
#define SCHED_PSIG_WORDS 4
typedef struct sched_psig {
	uint64_t w[SCHED_PSIG_WORDS];
} sched_psig;

/* Device classes: a request goes to GPUs or to the host. */
enum { CLS_GPU = 0, CLS_HOST = 1, CLS__COUNT };

typedef struct sched_dev {
	sched_device_info info;
	int cls;
	uint64_t mem_res;
	double comp_res;
	uint64_t foreign_raw; /* memory others use here, as last told */
	uint64_t foreign;   /* ... with the margin, at most the total: taken
			       off the free memory (sched__dev_free) */
	int avoided;        /* SCHED_FOREIGN_AVOID and others use it: takes
			       nothing new (claimed-like in the indexes) */
	size_t *run;        /* segment indices running here */
	size_t n_run, cap_run;
	int claimed;        /* set during sched_place: drained for a starving request */
	int claim_blocked;  /* a refusal in this call may be due to the claim */
	int pend;           /* its claim ended with refusals behind it, and it
			       was not touched for that (place.c, pending
			       claims): on the class's pending list */
	int held;           /* an exclusive segment or a gang holds it whole */
	uint64_t stamp;     /* last change that may let more fit (a release) */
	uint64_t t0_call;   /* cached throughput of the running set ... */
	size_t t0_nrun;     /* ... valid for this call and this many members */
	double t0;
	double t0_U;        /* ... its members' utilisation sum, the devices
			       they hold (gangs count each), and whether */
	double t0_W;
	size_t t0_npaired;  /* ... members in some observed pair, and the
			       shapes of the first SCHED_PSHAPES of them */
	uint64_t t0_pshape[SCHED_PSHAPES];
	sched_psig t0_sig;  /* ... and all of their shapes as bits */
	double g_U;         /* members' utilisation when each started (never
			       measured: 100), summed, and how many were not
			       measured (share.c, gandiva) */
	size_t g_unmeasured;
	int t0_any;         /* some pair of them has observed interference */
	uint64_t ver;       /* bumped when the running set changes or the
			       device is touched (a pair among its members
			       can only appear with a touch) */
	uint64_t any_ver;   /* ver at which any_pair was found */
	int any_pair;       /* some pair of its members has been observed */
	size_t cpos;        /* position in its class (cls_dev, the trees) */
	int mru_prev;       /* most-recently-changed list of its class (the
			       next link is in sched_hot) */
	size_t explore_gi1; /* the segment (index + 1) trying a co-location
			       here whose gain is not yet measured (place.c,
			       exploration); 0 none: one at a time per device,
			       and nothing else joins while it runs */
} sched_dev;

/* What the walk over recently changed devices reads of each device, kept
 * apart from the large device records so that the walk stays in cache
 * (devindex.c keeps it in step). */
typedef struct sched_hot {
	uint64_t stamp;     /* = sched_dev.stamp */
	uint64_t free_key;  /* free memory; 0 when claimed or held */
	int32_t next;       /* next in the most-recently-changed list, -1 end */
	uint32_t ver;       /* = sched_dev.ver, truncated (share.c compares it) */
} sched_hot;

/* Per-class device index (devindex.c). */
typedef struct sched_devidx {
	size_t P;           /* leaves: a power of two >= devices of the class */
	uint64_t *maxfree;  /* 2P: max free memory below a node (claimed/held: 0) */
	uint32_t *nempty;   /* 2P: empty unclaimed devices below a node */
	uint64_t *minres;   /* 2P: least reserved memory below a node (all
			       devices; padding UINT64_MAX) */
	int mru_head;       /* most recently changed device, -1 none */
	uint64_t min_total, max_total; /* device sizes of the class */
	double min_compute, max_compute; /* compute_total of the class */
	/* Best-fit index (pack only): a treap over the class positions of
	 * unheld devices keyed by (free memory, position), so the
	 * device left with the least free memory is one descent away. */
	int fit_on;
	uint64_t *tkey;     /* P: key of the node at a position */
	int32_t *tl, *tr;   /* P: children, -1 none */
	uint32_t *tprio;    /* P: heap priority of a position (a hash of it) */
	int32_t troot;      /* -1 empty */
	uint8_t *tin;       /* P: position is in the treap */
} sched_devidx;

/* One partner a running segment shared its device with. */
typedef struct sched_overlap {
	size_t seg;         /* partner's segment index */
	uint64_t shape;
	double since;       /* start of the overlap */
	double total;       /* closed overlap seconds */
	uint32_t peer;      /* the partner's entry for this overlap: closing
			       it costs O(1), not a scan of every partner
			       the other segment ever had */
	int open;
} sched_overlap;

enum { SEG_FREE = 0, SEG_QUEUED, SEG_RUNNING };

/* A queue entry: the segment and what its last refusal taught, kept in the
 * queue array itself so that skipping a refused segment reads no more
 * than this (the placement scan is the core's inner loop). */
typedef struct sched_qent {
	size_t gi;          /* segment index */
	uint64_t memo;      /* stamp at its last refusal, 0 = never tried */
	uint64_t memo_res;  /* its reservation then (0: whole devices) */
	double comp;        /* its compute hint (copied from the request) */
	uint32_t prof;      /* its profile index, UINT32_MAX: look it up */
	int8_t cls;         /* its device class then */
	uint8_t grows;      /* its reservation can only grow (pack, declared
			       hint): bigger than every hole stays refused
			       whatever its estimate does */
	uint16_t n_whole;   /* devices it takes when whole (gang size or 1) */
} sched_qent;

/* A queue in two parts.  The front: the first segments by key, sorted,
 * at qbuf[q_lo .. q_lo + n_queue), with room at both ends, which is all
 * a placement call scans (at most scan_max of them).  The back: every
 * later segment in a binary min-heap by key, so that a segment
 * resubmitted into the middle of a long queue costs O(log queue), not a
 * memmove of half of it.  Every front key is below every back key;
 * place.c refills the front from the heap (queue_refill) before it
 * scans.  With scan_max = 0 everything is in the front.  The core has
 * one (every order but fair) or one per user (fair). */
typedef struct sched_queue {
	sched_qent *qbuf;
	size_t q_lo, n_queue, cap_queue;
	sched_qent *hbuf;
	size_t n_back, cap_back;
} sched_queue;

/* A user: share, limits and the service its segments attained. */
typedef struct sched_user {
	uint32_t id;
	double weight;
	sched_user_limits lim;
	double closed_s;        /* device-seconds of its ended segments */
	double run_dev;         /* devices its running segments hold ... */
	double run_dev_start;   /* ... and the sum of devices x start, so
				   that attained(now) = closed_s + run_dev x
				   now - run_dev_start, O(1) */
	size_t n_running, n_queued;
	uint64_t mem_res;       /* reservations x devices of its running ones */
	uint64_t host_mem_res;  /* ... of those on host devices */
	int run_gpus;           /* GPUs its running segments hold (max_gpus) */
	double host_cpu_res;    /* compute (CPUs) of those on host devices, each
				   at least SCHED_CPU_LEAST */
	sched_queue q;          /* fair: its queued segments */
	/* fair, within one sched_place call (place.c) */
	size_t scan_r, scan_w, scan_tried;
	double pass_key;        /* usage(now) / weight */
	/* fair with a half-life (usage.c): decayed device-seconds as of use_t */
	double use_s, use_t;
	int use_set;            /* use_t holds a time */
} sched_user;

/* A job: the service its ended segments attained (LAS, Tiresias). */
/* est_hint_factor: ratios of peak to hint by hundredths, up to 4 */
#define SCHED_HINT_BINS 400
/* ... and the shapes it needs before its quantile means anything */
#define SCHED_HINT_MIN 20

/* las_tail: quarter-octave bins from 1 s to 2^32 s (136 years) */
#define SCHED_LAS_BINS 128
/* ... and the ended jobs it needs before a tail means anything (a 99th
 * percentile of fewer than a hundred is their largest) */
#define SCHED_LAS_MIN_JOBS 100

typedef struct sched_job {
	uint64_t id;
	double attained_s;
	size_t n_live;          /* its segments the core holds */
	size_t run_seg;         /* its running segment, SCHED_NONE none */
	int forget;             /* forget it when its last segment goes */
} sched_job;

typedef struct sched_seg {
	sched_request req;
	size_t user;            /* index into sched.user */
	size_t job;             /* index into sched.job, SCHED_NONE: none */
	double okey;            /* the order policy's key, fixed at submit */
	double svc_start;       /* service counted from (adopted: submit_time) */
	int state;
	int adopted;        /* start time unknown: learn no throughput */
	size_t prof;        /* shape profile index */
	sched_placement pl;
	double start;
	int held;           /* holds its devices exclusively */
	int claim[SCHED_MAX_GANG]; /* devices it drains while starving */
	int n_claim;
	sched_overlap *ov;
	size_t n_ov, cap_ov;
	size_t next_free;
	size_t srun_prev, srun_next; /* running segments of its shape */
	size_t hpos;        /* queued in the back heap at this index, else
			       SCHED_NONE */
	uint64_t foreign_seen; /* running: most foreign memory on its devices */
	double wait_since;  /* queued: its wait for foreign memory began
			       (sched_foreign_wait), < 0 not waiting */
	uint64_t ov_mark;   /* place_commit: partner already recorded */
	double g_util;      /* what it added to its devices' g_U ... */
	int g_unm;          /* ... and to their g_unmeasured */
	int explore_dev;    /* place_shared chose this device as an
			       exploration (place_commit marks it), -1 none */
	int explore;        /* running as an exploration */
} sched_seg;

/* Feature transforms of the family models. */
#define SCHED_MAX_COEF (1 + SCHED_MAX_FEAT + (SCHED_MAX_FEAT * (SCHED_MAX_FEAT + 1)) / 2)

typedef struct sched_profile {
	uint64_t shape;
	size_t fam;             /* family index */
	uint64_t group;         /* sched_request.group, 0 none */
	size_t n_feat;
	double feat[SCHED_MAX_FEAT];
	size_t n_measured;
	uint64_t peak;          /* max observed peak, MiB */
	uint64_t oom_floor;     /* reservation needed after an OOM, MiB */
	uint64_t fam_res;       /* its first reservation on the family
				   model's estimate, until measured */
	double util;            /* EWMA, <0 unknown */
	double thr_alone;       /* EWMA work/s alone, 0 unknown */
	size_t n_alone;
	double thr_shared;      /* EWMA work/s beside others, 0 unknown */
	size_t n_shared;
	/* within one sched_place call: the shape was rejected everywhere
	 * with reservation >= memo_mem and compute hint >= memo_comp */
	uint64_t stamp;         /* last change of its reservation or utilisation */
	uint64_t memo_call;     /* sched_place call of the memo below */
	uint64_t memo_mem;
	double memo_comp;
	int memo_cls;
	/* cached family prediction, valid while pred_fit == family's fit_id */
	uint64_t pred_fit;
	double pred;
	/* rejected everywhere at stamp memo_at with these figures (valid
	 * across calls while the profile and family stamps are older) */
	uint64_t memo_at;
	uint64_t memo_at_mem;
	double memo_at_comp;
	int memo_at_cls;
	double util_stamped;    /* utilisation at the last stamp change */
	size_t run_head;        /* running segments of this shape, SCHED_NONE none */
	int paired;             /* the shape is in some observed pair (paired_map) */
	size_t psig;            /* then its partners' shapes (s->psig), else
				   SCHED_NONE */
	/* relish: on its family's list of running shapes whose utilisation
	 * is the family's mean (util < 0), linked by profile index */
	int on_guess;
	size_t guess_prev, guess_next;
	uint64_t used;          /* use_clock when last submitted, learnt or
				   given back: the least recently used are
				   forgotten first (learnt.c) */
	uint32_t user;          /* sched_request.user of that use: what is
				   kept is shared among users (learnt.c) */
} sched_profile;

/* A group's shapes' throughputs alone, each shape's first (estimate.c):
 * what a shape of the group never measured alone is taken to run at. */
typedef struct sched_gspeed {
	uint64_t group;
	size_t n;
	double sum, lo, hi;
} sched_gspeed;

typedef struct sched_family {
	uint64_t family;
	size_t *shapes;         /* measured profile indices */
	size_t n_shapes, cap_shapes;
	size_t n_feat;          /* feature count used (min over shapes) */
	size_t since_fit;       /* updates since the last fit */
	uint64_t fit_id;        /* increments on every fit (0 = never) */
	uint64_t stamp;         /* last change of its estimates: a fit, or a
				   material move of its mean utilisation */
	sched_fit fit;
	/* coefficients, then the standardisation's means, then its scales,
	 * SCHED_MAX_COEF each (FAM_COEF ...): allocated at the first fit,
	 * since most families never have two measured shapes and the record
	 * is read on every placement (1.2 kB inline made it a cache miss
	 * and 55 MB of the simulator's x10 trace) */
	double *model;
	size_t n_coef;
	size_t n_points;
	double loo_rmse;
	double util_sum;        /* mean utilisation of measured shapes */
	size_t util_n;
	double util_stamped;    /* that mean at the last stamp, < 0 none */
	size_t guess_head;      /* running shapes that use that mean (relish),
				   SCHED_NONE none */
} sched_family;

#define FAM_COEF(f) ((f)->model)
#define FAM_MEAN(f) ((f)->model + SCHED_MAX_COEF)
#define FAM_SCALE(f) ((f)->model + 2 * SCHED_MAX_COEF)

typedef struct sched_est_stamp {
	uint64_t stamp;         /* = sched_profile.stamp */
	size_t fam;             /* = sched_profile.fam */
} sched_est_stamp;

/* relish: a candidate in no observed pair, with this reservation and
 * utilisation, was refused on every device as they were at stamp. */
typedef struct sched_xmemo {
	uint64_t res;
	double util;
	uint64_t stamp;
} sched_xmemo;

#define SCHED_XMEMO 16

/* share.c: a gang of k refused in sched_place call `call`. */
typedef struct sched_gmemo {
	uint64_t call;
	int k;
	uint64_t res;
	double util, comp;
	double ubucket;         /* floor(util / 20), once at the note: the
				   lookup, in the scan's inner loop, compares
				   buckets */
	int gain;               /* refused for its gain, not for memory */
} sched_gmemo;

typedef struct sched_pair {
	uint64_t a, b;
	double d;               /* interference: 1/speed_a - 1 */
	size_t n;
	int derived;            /* d is its groups' (colocate.c), not measured:
				   1 their agreed mean, 2 their worst */
	uint64_t lstamp;        /* learn_stamp of its latest measurement, 0
				   none since it was given back (learnt.c) */
} sched_pair;

/* Co-locations of shapes a < b tried as explorations (colocate.c). */
typedef struct sched_explore {
	uint64_t a, b;
	size_t n;
	uint64_t lstamp;        /* as a pair's */
} sched_explore;

/* What was measured of shapes of group a beside shapes of group b. */
typedef struct sched_gpair {
	uint64_t a, b;
	size_t n;
	double d;               /* mean interference measured */
	double d_max;
	double s_min, s_max;    /* the speeds measured, their range */
	int agreed;             /* derived pairs hold its mean (else d_max) */
	uint64_t lstamp;        /* as a pair's */
} sched_gpair;

struct sched {
	sched_options opt;
	sched_dev *dev;
	size_t n_dev, cap_dev;
	sched_hot *hot;         /* per device, capacity cap_hot */
	size_t cap_hot;
	size_t n_cls[CLS__COUNT];
	int *cls_dev[CLS__COUNT]; /* device indices of each class */
	size_t cap_cls_dev[CLS__COUNT];
	sched_devidx idx[CLS__COUNT];
	int claimed_list[CLS__COUNT * SCHED_MAX_GANG]; /* claimed in this call */
	size_t n_claimed, n_claim_blocked;
	/* Pending claims (place.c): devices whose claim ended with refusals
	 * behind it, released at pend_stamp and not touched, since the same
	 * starving head claims them again in the next call, as a rule. */
	int pend_list[CLS__COUNT][CLS__COUNT * SCHED_MAX_GANG];
	size_t n_pend[CLS__COUNT];
	uint64_t pend_stamp[CLS__COUNT];
	int noted_whole;        /* claim_note for a whole segment done since the
				   claimed list last grew (place.c) */
	uint64_t noted_res;     /* least shared reservation noted since then */

	sched_seg *seg;
	size_t n_seg, cap_seg;
	size_t free_head;       /* free list through next_free */
	sched_map seg_map;      /* seg_id -> index */
	size_t n_running;

	sched_queue q;          /* the queue (fair: each user has its own) */
	size_t n_queued;        /* segments queued, all queues */
	sched_user *user;       /* users, in the order they appeared */
	size_t n_user, cap_user;
	sched_map user_map;     /* user id -> index */
	int any_limits;         /* some user has a limit */
	size_t *uheap;          /* fair: users by pass_key within a call */
	size_t cap_uheap;
	struct spread_memo **smemo; /* share.c: per profile, NULL until used */
	size_t n_smemo, cap_smemo;
	sched_job *job;         /* jobs with live segments or service */
	size_t n_job, cap_job;
	size_t job_free;        /* forgotten slots, chained through id */
	/* The service (GPU-seconds) of jobs the drivers said ended, by
	 * quarter octave from 1 s: the LAS order's tail (order_key) */
	double las_hist[SCHED_LAS_BINS];
	double las_n;
	/* Measured peak over declared hint of each shape's first completed
	 * measurement, by hundredths up to SCHED_HINT_BINS / 100: the hint's
	 * headroom (est_hint_factor) */
	double hint_hist[SCHED_HINT_BINS];
	double hint_n;
	/* Measured peak over the first family-model reservation of each
	 * shape that had one, at its first completed measurement, by
	 * hundredths: the family estimate's headroom (est_family_factor) */
	double fam_hist[SCHED_HINT_BINS];
	double fam_n;
	/* What a driver keeps across restarts (learnt.c): each change of a
	 * measured pair, a pair of groups, an exploration count or a
	 * histogram's bin takes the next learn_stamp; a bin's is in the
	 * *_lstamp beside it. */
	uint64_t learn_stamp;
	uint64_t use_clock;     /* ticks on each use of a profile (its used) */
	size_t forget_kept;     /* shapes the last learnt_forget kept */
	size_t n_derived_made;  /* derived pairs made (colocate.c) ... */
	size_t derived_sweep_at; /* ... when the next derived_sweep is due */
	uint64_t las_lstamp[SCHED_LAS_BINS];
	uint64_t hint_lstamp[SCHED_HINT_BINS];
	uint64_t fam_lstamp[SCHED_HINT_BINS];
	sched_map job_map;      /* job id -> index */

	sched_profile *prof;
	size_t n_prof, cap_prof;
	sched_map prof_map;     /* shape -> index */
	sched_family *fam;
	size_t n_fam, cap_fam;
	sched_map fam_map;      /* family -> index */
	sched_gspeed *gspeed;   /* by group (estimate.c) */
	size_t n_gspeed, cap_gspeed;
	sched_map gspeed_map;   /* group -> index */
	/* Dense copies of the change stamps (profile's stamp and family
	 * index, family's stamp), so that the placement scan checks whether
	 * a queued segment's estimate moved without reading the large
	 * profile and family records (estimate.c keeps them in step). */
	sched_est_stamp *pstamp; /* n_prof, capacity cap_pstamp */
	size_t cap_pstamp;
	uint64_t *fstamp;       /* n_fam, capacity cap_fstamp */
	size_t cap_fstamp;
	sched_pair *pair;
	size_t n_pair, cap_pair;
	sched_map pair_map;     /* (a, b) -> index */
	sched_map paired_map;   /* shape -> index into psig when it is in some pair */
	sched_map explore_map;  /* unordered pair of shapes (lower first) ->
				   index into explore */
	sched_explore *explore; /* co-locations of a pair tried as explorations */
	size_t n_explore, cap_explore;
	sched_gpair *gpair;     /* pairs of groups (colocate.c) */
	size_t n_gpair, cap_gpair;
	sched_map gpair_map;    /* (group a, group b) -> index */
	sched_psig *psig;       /* per paired shape, the shapes it pairs with */
	size_t n_psig, cap_psig;
	/* A Bloom filter over the pairs (colocate.c): most lookups are of
	 * pairs never observed, and the filter, a few bits per pair, answers
	 * those without a probe into the much larger map. */
	uint64_t *pair_bloom;
	size_t pair_bloom_bits; /* a power of two, 0 = none yet */
	/* Recent refusals of unpaired candidates per class (place.c): none
	 * is dominated by another (smaller or equal reservation and
	 * utilisation, and as recent). */
	sched_xmemo xmemo[CLS__COUNT][SCHED_XMEMO];
	size_t n_xmemo[CLS__COUNT];
	sched_gmemo gmemo[CLS__COUNT][SCHED_XMEMO];
	size_t n_gmemo[CLS__COUNT];

	/* Change stamps (one counter): a queued segment rejected at stamp m
	 * need not be tried again until a device of its class, its profile
	 * or its family changes after m (see place.c). */
	uint64_t stamp;
	uint64_t all_stamp;     /* changes that concern every device */
	uint64_t est_stamp;     /* latest change of any profile or family */
	uint64_t cls_stamp[CLS__COUNT];
	uint64_t add_stamp;     /* stamp of the latest sched_add_device: a new
				   device may change a request's class or the
				   largest device size its estimate reads */
	uint64_t call_id;
	uint64_t commit_id;     /* place_commit's marks */
	uint64_t gang_call[SCHED_MAX_GANG + 1]; /* gang refusals of each size ... */
	size_t gang_refused[SCHED_MAX_GANG + 1]; /* ... in call gang_call */
	sched_work work;        /* sched_work_get */
	size_t n_foreign[CLS__COUNT]; /* devices with foreign memory counted:
				   while 0, whole placements take the index's
				   fast path */
	double last_now;        /* latest time seen (sched_remove has none) */
};

/* Memory free for a new reservation on d: total - reserved - foreign
 * (with its margin), never below 0. */
static inline uint64_t sched__dev_free(const sched_dev *d)
{
	uint64_t used = d->mem_res + d->foreign;
	return used < d->info.mem_total_mib ? d->info.mem_total_mib - used : 0;
}

/* Mark a device changed (something may fit that did not), every device,
 * or the devices running a shape (by its key, or its profile index). */
void sched__touch_dev(sched *s, sched_dev *d);
void sched__touch_all(sched *s);
void sched__touch_shape(sched *s, uint64_t shape);
/* Mark in held (n_prof flags, zeroed) the profiles of the segments the
 * core holds (queued or running); returns how many were newly marked. */
size_t sched__held_profiles(const sched *s, unsigned char *held);
/* Segments and queue entries follow est_forget's remap. */
void sched__remap_prof(sched *s, const size_t *remap);
/* learnt.c: the least recently used shapes beyond learn_max forgotten,
 * once the core holds learnt_forget_at(s) shapes. */
void learnt_forget(sched *s);
size_t learnt_forget_at(const sched *s);
void sched__touch_prof(sched *s, size_t prof);
/* The upper edge (bin + 1) of the bin of hist (bins counts, n in all) in
 * which its q quantile falls, or 0 when the counts never reach it.  The
 * measured quantiles (a hint's and a family estimate's headroom, the tail
 * of LAS) are each one histogram read by this. */
int sched__hist_upper(const double *hist, int bins, double n, double q);

/* Grow an array to hold at least need elements; 0 or RL_ENOMEM. */
int sched__grow(void **arr, size_t *cap, size_t need, size_t elem);

/* Device class a request is placed on (GPU, or host when a host device
 * exists, else GPU). */
int sched__req_class(const sched *s, const sched_request *req);

/* ---- estimate.c ---- */
/* Reservations from measurements first (profiles, family model, the hint
 * with headroom, one probe per shape): relish, and the Gandiva peer, which
 * profiles jobs itself. */
static inline int est_measures_first(const sched *s)
{
	return s->opt.policy == SHARE_RELISH || s->opt.policy == SHARE_GANDIVA;
}
/* The host's probe: host_probe_share of the largest host device, within
 * host_probe_min_mib and host_probe_max_mib (MiB); 0 when off. */
uint64_t est_host_probe_mib(const sched *s);
/* Profile of a shape, created (unmeasured) when absent; SCHED_NONE on
 * allocation failure. */
size_t est_profile_ensure(sched *s, const sched_request *req);
size_t est_profile_find(const sched *s, uint64_t shape);
/* Reservation for a request under the scheduler's policy for devices of
 * class cls.  *mem == 0 with basis EXCLUSIVE means a whole device. */
void est_reserve(const sched *s, const sched_request *req, size_t prof, int cls,
		 sched_mem_estimate *out);
/* Compute share on a device of class cls. */
double est_compute(const sched *s, const sched_request *req, size_t prof,
		   const sched_dev *d);
/* Utilisation (percent of a device) used by the co-location model. */
double est_util(const sched *s, const sched_request *req, size_t prof,
		const sched_dev *d);
/* Learn from an observation: peak, utilisation, throughput alone
 * (company EST_ALONE) or beside others (EST_SHARED; EST_UNTIMED: neither,
 * its start is unknown), OOM raise with the reservation the segment had. */
enum { EST_UNTIMED = -1, EST_ALONE = 0, EST_SHARED = 1 };
/* An end of a segment of shape pi, before est_observe: when it is the
 * shape's first completed measurement and req declared a hint, their
 * ratio counts for the hint's headroom (est_hint_factor). */
void est_hint_note(sched *s, size_t pi, const sched_request *req, const sched_observation *obs);
/* The same for a shape first placed on the family model's estimate (pl:
 * the ending segment's placement): measured peak over that reservation
 * counts for the family estimate's headroom (est_family_factor). */
void est_family_note(sched *s, size_t pi, const sched_placement *pl, const sched_observation *obs);
void est_observe(sched *s, size_t prof, const sched_observation *obs, int company,
		 uint64_t reserved_mib);
/* The shape's first segment started running, or its last stopped: under
 * relish an unmeasured shape reserves by whether its probe runs, so its
 * queued segments must be looked at again. */
void est_running_changed(sched *s, size_t prof);
/* Profile pi's throughput alone: its own, else its group's when the
 * group's shapes measured alone agree (est_observe), else 0. */
double est_thr_alone(const sched *s, size_t pi);
/* Forgetting shapes (learnt.c): the profiles closed up, profile i moving
 * to remap[i] (SCHED_NONE: forgotten; never a profile a segment holds),
 * keeping their order; families drop the forgotten from their points. */
void est_forget(sched *s, const size_t *remap);
void est_fini(sched *s);

/* ---- mem.c ---- */
/* The floor after an out-of-memory: max(reservation x oom_factor,
 * max(peak, reservation) x (1 + memory_margin)), and always more than the
 * reservation. */
uint64_t mem_oom_need(const sched *s, uint64_t peak_mib, uint64_t reserved_mib);
/* The request's class has enough devices for it (gangs): the only test an
 * aging claim needs. */
int mem_class_placeable(const sched *s, const sched_request *req);

/* ---- colocate.c ---- */
/* Modelled total throughput of a device's running set plus (optionally)
 * one candidate with shape cand_shape and utilisation cand_util. */
double colo_throughput(const sched *s, const sched_dev *d, int with_cand,
		       uint64_t cand_shape, double cand_util);
/* colo_throughput(s, d, 1, cand_shape, cand_util) for a device whose own
 * set was just measured with colo_throughput(s, d, 0, ...) in this call:
 * O(1) when neither the set nor the candidate (cand_paired = colo_paired)
 * has observed pairs, the general path otherwise; same result either way. */
double colo_throughput_with(const sched *s, const sched_dev *d, uint64_t cand_shape,
			    double cand_util, int cand_paired);
int colo_paired(const sched *s, uint64_t shape);
/* A candidate evaluated on one device (colo_eval). */
typedef struct colo_cand {
	double speed;           /* its own speed there */
	double loss;            /* members' speed change x their devices, <= 0 */
	double t0;              /* members' speed x their devices, before */
	double weight;          /* members' devices */
} colo_cand;
void colo_eval(const sched *s, const sched_dev *d, size_t cand_prof, double cand_util,
	       colo_cand *out);
/* Learn from a finished segment that shared its device. */
void colo_observe(sched *s, const sched_seg *g, double now, double speed);
/* Explorations of the pair of shapes a, b so far (either order), and one
 * more (place_commit). */
size_t colo_explored(const sched *s, uint64_t a, uint64_t b);
void colo_explore_note(sched *s, uint64_t a, uint64_t b);
/* A new profile pi of some group: its pairs with the shapes of groups
 * measured to agree with its own (colocate.c). */
void colo_group_shape(sched *s, size_t pi);
/* Profile pi (of some group) used again: outside the window of newest
 * shapes, its pairs with the window's are derived anew. */
void colo_group_use(sched *s, size_t pi);
/* The pair a, b (either way) holds its groups' agreed figure: their
 * measurements stand in for the pair's exploration. */
int colo_group_agreed(const sched *s, uint64_t a, uint64_t b);
/* learnt.c's share: the measured pairs, pairs of groups and exploration
 * counts changed after since (count returned, at most max written from
 * out[0]), and one given back (checked by learnt.c; 0 or RL_ENOMEM). */
size_t colo_learnt_list(const sched *s, uint64_t since, sched_learnt *out, size_t max);
int colo_learnt_import(sched *s, const sched_learnt *row);
/* The pairs and exploration counts of the shapes in gone (a map of
 * shapes) forgotten; the partner sets made again (after est_forget). */
void colo_forget(sched *s, const sched_map *gone);
void colo_fini(sched *s);

/* ---- devindex.c ---- */
/* Register device di (already in cls_dev, n_cls counted); 0 or RL_ENOMEM. */
int devidx_add(sched *s, int di);
/* Re-key d after its reservation, hold, claim or running set changed. */
void devidx_update(sched *s, const sched_dev *d);
/* Move d to the front of its class's most-recently-changed list. */
void devidx_touch(sched *s, sched_dev *d);
uint64_t devidx_max_free(const sched *s, int cls);
size_t devidx_n_empty(const sched *s, int cls);
/* Device index of the k-th empty unclaimed device (index order), or -1. */
int devidx_kth_empty(const sched *s, int cls, size_t k);
/* Best fit: the unclaimed, unheld device of class cls with the least free
 * memory >= need (ties: lowest index), or -1.  Only when the class's fit
 * index is on (devidx_fit_on). */
int devidx_best_fit(const sched *s, int cls, uint64_t need);
/* The device of class cls with the least reserved memory (ties: lowest
 * index), leaving out the n_skip devices in skip, or -1. */
int devidx_least_reserved(sched *s, int cls, const int *skip, int n_skip);
int devidx_fit_on(const sched *s, int cls);
void devidx_fini(sched *s);

#define SCHED_Q(q, i) ((q)->qbuf[(q)->q_lo + (i)])
/* Move segments from the back heap into the front until it holds what one
 * placement call may scan (or the heap is empty); 0 or RL_ENOMEM. */
int queue_refill(sched *s, sched_queue *q);
/* A user's attained device-seconds at now. */
double user_attained(const sched_user *u, double now);
/* The user's index, created (weight 1) when new; SCHED_NONE out of memory. */
size_t user_ensure(sched *s, uint32_t id);

/* usage.c: the fair order's usage, decayed by fair_half_life_s */
/* What the fair order ranks u by at now: its decayed usage (its attained
 * service when nothing decays). */
double user_usage(const sched *s, const sched_user *u, double now);
/* n devices start being held at start (now, or earlier for an adopted
 * segment); call before run_dev changes. */
void usage_start(const sched *s, sched_user *u, double n, double start, double now);
/* A running segment ends at now; call before run_dev changes. */
void usage_end(const sched *s, sched_user *u, double now);

/* ---- place.c ---- */
/* What one placement call knows of each class, kept up to date as it
 * places. */
typedef struct pass {
	uint64_t max_free[CLS__COUNT]; /* largest free memory, unclaimed unheld devices */
	size_t n_empty[CLS__COUNT];    /* empty unclaimed devices */
	int head_seen[CLS__COUNT];
	int saturated;                 /* no device of any class has a free byte
					  (kept by pass_refresh: the scan asks
					  before every entry) */
} pass;

static inline uint64_t dev_free(const sched_dev *d)
{
	return sched__dev_free(d);
}

/* A segment takes whole devices and holds them: its reservation is a
 * whole device (basis exclusive), or it is a gang and gangs do not share. */
static inline int place_is_whole(const sched *s, const sched_seg *g, const sched_mem_estimate *e)
{
	if (e->basis == SCHED_BASIS_EXCLUSIVE || (g->req.n_devices > 1 && !s->opt.share_gangs))
		return 1;
	/* relish bets one segment at a time of a shape never measured on an
	 * estimate (the hint's probe, estimate.c, and the family model's
	 * alike): while one runs, the shape's others run whole.  A gang
	 * does the same with gang_probe; without it, it shares only on its
	 * own shape's measured peak. */
	const sched_profile *p = &s->prof[g->prof];
	return s->opt.policy == SHARE_RELISH && !p->n_measured &&
	       ((g->req.n_devices > 1 && !s->opt.gang_probe) ||
		(s->opt.family_probe && e->basis == SCHED_BASIS_FAMILY && p->run_head != SCHED_NONE));
}

/* relish's admission: a modelled gain over n_changed predicted speeds (the
 * candidate's and the members' it slows, counted by devices) is taken
 * when, after the margin on each of them, it still grows the devices'
 * throughput t0 by min_speedup. */
static inline int place_admits(const sched *s, double gain, double n_changed, double t0)
{
	return gain - s->opt.colocate_margin * n_changed >= (s->opt.min_speedup - 1) * t0;
}

/* The same with the margin added instead of taken off: the estimate's
 * optimistic side.  A co-location this admits and place_admits does not
 * is uncertain: worth measuring (place.c, exploration). */
static inline int place_may_gain(const sched *s, double gain, double n_changed, double t0)
{
	return gain + s->opt.colocate_margin * n_changed >= (s->opt.min_speedup - 1) * t0;
}
size_t place_run(sched *s, double now, sched_placement *out, size_t max);
/* Put a segment on a set of devices (bookkeeping shared with adopt). */
int place_commit(sched *s, size_t gi, const sched_placement *pl, double now);
/* relish's time-slice fallback: may g, refused by the model, slice beside
 * the member (at most one) of d?  *specific: the answer read a pair. */
int place_slice_ok(const sched *s, const sched_seg *g, const sched_dev *d, int *specific);

/* ---- share.c ---- */
/* A placement on devices chosen from all of its class: gangs that share
 * (relish, gandiva) and every Gandiva placement.  Fills pl and returns 1,
 * or returns 0 when no set of devices admits the segment. */
int place_spread(sched *s, const pass *ps, sched_seg *g, int cls,
		 const sched_mem_estimate *e, sched_placement *pl);
/* The per-profile memos follow est_forget's remap (of n_old profiles). */
void spread_forget(sched *s, const size_t *remap, size_t n_old);
void spread_fini(sched *s);
/* A gang of k of profile prof with this reservation, utilisation and
 * compute was, or one no larger was, refused in this call. */
int spread_refused(const sched *s, size_t prof, int cls, int k, uint64_t res, double util,
		   double comp);

#endif
