/*
 * policy.h - the scheduling vocabulary, owned by the core and read by every
 * surface that names it: the spec schema (sharing.policy, sharing.order,
 * sharing.foreign), the service config, `relish run` and `relish simulate`.
 * One list each (X-macros, as err.h's codes) generates the enum, the names
 * and the table, so a policy, an order or a setting is added in one row.
 * (Until issue 28 the names were spelled out in four files, the Tiresias
 * and Gandiva presets lived only in the simulator, two enums said how to
 * treat other users' memory, and the simulator's policy enum reused the
 * placement's values, so that its Tiresias equalled the core's Gandiva.)
 *
 * Pure data and lookups: no I/O.  Implementation: policy.c.
 */
#ifndef RELISH_SCHED_POLICY_H
#define RELISH_SCHED_POLICY_H

/* How the core places a segment (docs/scheduling.md, "Policies"): the
 * placement half of a named policy. */
typedef enum sharing_policy {
	SHARE_EXCLUSIVE,  /* a whole empty device per segment */
	SHARE_PACK,       /* declared memory, best fit */
	SHARE_RELISH,     /* measured memory and the co-location model */
	SHARE_GANDIVA,    /* Gandiva: packing by measured utilisation,
			     time-slicing, introspection */
} sharing_policy;

/* The order in which the core offers queued segments to the devices
 * (docs/scheduling.md, "Queue order"): DEFAULT is the named policy's. */
#define SCHED_ORDER_MAP(X)                                                        \
	X(DEFAULT, "default", "the policy's own order")                           \
	X(FIFO, "fifo", "by the job's arrival")                                   \
	X(LAS, "las", "least attained service first, at segment boundaries")      \
	X(TIRESIAS, "tiresias", "discretised 2D-LAS queues (Gu et al., NSDI'19)") \
	X(FAIR, "fair", "users by decaying usage (device-time) over their share, las within")

typedef enum queue_order {
#define X(id, name, what) ORDER_##id,
	SCHED_ORDER_MAP(X)
#undef X
	ORDER__COUNT
} queue_order;

/*
 * The named policies: what a spec's sharing.policy, the service config's
 * policy:, `relish run --policy` and `relish simulate --policy` accept.
 * Each row is a placement and the queue order it uses unless told
 * otherwise; the peers (tiresias, gandiva) are presets of the same core,
 * so the live driver runs them as the simulator does.
 *   X(ID, name, placement, default order, what it is)
 */
#define SCHED_POLICY_MAP(X)                                                       \
	X(EXCLUSIVE, "exclusive", SHARE_EXCLUSIVE, ORDER_FIFO,                    \
	  "a whole device per segment, FIFO: today's practice")                   \
	X(PACK, "pack", SHARE_PACK, ORDER_FIFO,                                   \
	  "packing by declared memory, best fit, FIFO")                           \
	X(RELISH, "relish", SHARE_RELISH, ORDER_LAS,                              \
	  "measured memory and learnt co-location, least attained service")       \
	X(TIRESIAS, "tiresias", SHARE_EXCLUSIVE, ORDER_TIRESIAS,                  \
	  "Tiresias (Gu et al., NSDI'19): whole devices, discretised 2D-LAS")     \
	X(GANDIVA, "gandiva", SHARE_GANDIVA, ORDER_FIFO,                          \
	  "Gandiva (Xiao et al., OSDI'18): packing by utilisation, time-slicing")

typedef enum sched_policy {
#define X(id, name, placement, order, what) SCHED_POLICY_##id,
	SCHED_POLICY_MAP(X)
#undef X
	SCHED_POLICY__COUNT
} sched_policy;

typedef struct sched_policy_info {
	const char *name;
	sharing_policy placement;
	queue_order order;       /* its default queue order */
	const char *what;        /* one line, for help texts */
} sched_policy_info;

/* What the core does with devices that processes relish does not own use
 * (other users' notebooks, another tool, another relish on another
 * database): share the memory they leave free, or keep off them. */
#define SCHED_FOREIGN_MAP(X)                                            \
	X(SHARE, "share", "place beside them in the memory they leave free") \
	X(AVOID, "avoid", "keep new segments off a device while others use it")

typedef enum sched_foreign_policy {
#define X(id, name, what) SCHED_FOREIGN_##id,
	SCHED_FOREIGN_MAP(X)
#undef X
	SCHED_FOREIGN__COUNT
} sched_foreign_policy;

/*
 * The admission window: a driver hands the core at most this many new
 * trials of one experiment that are not yet placed, beyond what runs,
 * and keeps the rest to itself (the live driver takes them from the
 * search engine only then; the simulator holds the trace's later trials
 * of the experiment).  A small window keeps the search's proposals late,
 * so each one knows the most results; it also bounds how far the core
 * backfills within one experiment.  A started trial's next segment is no
 * proposal and always goes in (there is one per trial in flight): until
 * issue 26 the window counted those too, and two new trials waiting for
 * a device held every started trial's next segment out of the queue at
 * its boundary, leaving devices idle.  Both drivers use this figure, so
 * a simulation decides what a live run would.
 */
#define SCHED_ADMIT_WINDOW 2

/* The names, indexed by value (for tables that take a list of names, as
 * the spec schema's enum fields do). */
extern const char *const sched_policy_names[SCHED_POLICY__COUNT];
extern const char *const sched_order_names[ORDER__COUNT];
extern const char *const sched_foreign_names[SCHED_FOREIGN__COUNT];

/* The policy's row; NULL for a value outside the enum. */
const sched_policy_info *sched_policy_get(sched_policy p);
/* "relish", ...; "?" for a value outside the enum. */
const char *sched_policy_name(sched_policy p);
/* The policy named s: 0, or RL_EINVAL (nothing written). */
int sched_policy_from_name(const char *s, sched_policy *out);
/* Its placement rule. */
sharing_policy sched_policy_placement(sched_policy p);
/* The order policy p uses: forced unless that is ORDER_DEFAULT. */
queue_order sched_policy_order(sched_policy p, queue_order forced);
/* The names for messages, "exclusive, pack, relish, tiresias, gandiva"
 * (a constant). */
const char *sched_policy_list(void);

const char *sched_order_name(queue_order o);
int sched_order_from_name(const char *s, queue_order *out);
const char *sched_foreign_policy_name(sched_foreign_policy p);
int sched_foreign_policy_from_name(const char *s, sched_foreign_policy *out);

#endif
