/*
 * tasks.c - several simulations at once (sim_run_tasks, sim.h): a batch of
 * independent runs of sim_run on a pool of threads, the most expensive
 * first.  Split from sim.c, whose runs it only schedules.
 *
 * The batch runs on a pool of workers, one per processor (at most
 * SIM_WORKERS), each taking the next task not yet taken until none is
 * left, the tasks ordered by their expected cost, the most expensive
 * first (longest-processing-time-first list scheduling).  One thread per
 * task would share the processors among all of them, so the longest run
 * (relish) would get a fraction of a processor while the short ones ran
 * and finish alone on one processor at the end; taken longest first, it
 * starts at once on a processor of its own while the others fill the
 * rest.  The order changes only when each run happens, never what it
 * computes: each run is independent and deterministic.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sim/sim.h"

#define SIM_WORKERS 8

/* Expected cost of a run: CPU seconds of each policy alone on the Philly
 * trace at 64 GPUs, one-hour segments (docs/evaluation.md "Speed and
 * memory": relish and gandiva evaluate devices for every gang they try to
 * place, the others read the device index), times the segments per hour
 * of work for the Tiresias peer's quantum (its events grow with them).
 * Only the order of these matters. */
static double task_cost(const sim_task *k)
{
	double c;
	switch (k->policy) {
	case SCHED_POLICY_RELISH: c = 2.1; break;
	case SCHED_POLICY_GANDIVA: c = 1.2; break;
	case SCHED_POLICY_PACK: c = 0.46; break;
	case SCHED_POLICY_EXCLUSIVE: c = 0.25; break;
	case SCHED_POLICY_TIRESIAS: c = 0.21; break;
	default: c = 0; break;
	}
	double q = k->cfg->tune.tiresias_quantum_s;
	if (k->policy == SCHED_POLICY_TIRESIAS && q > 0 && q < k->cfg->segment_s)
		c *= k->cfg->segment_s / q;
	return c;
}

typedef struct task_pool {
	const sim_trace *t;
	const sim_model *m;
	sim_task *tasks;
	const size_t *order;      /* task indices, most expensive first
				     (NULL: as given) */
	size_t n;
	atomic_size_t next;       /* the next position in order to take */
} task_pool;

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *task_worker(void *arg)
{
	task_pool *pool = arg;
	for (;;) {
		size_t i = atomic_fetch_add(&pool->next, 1);
		if (i >= pool->n)
			return NULL;
		sim_task *k = &pool->tasks[pool->order ? pool->order[i] : i];
		rl_err_clear(&k->err);
		double t0 = mono_s();
		k->rc = sim_run(pool->t, pool->m, k->cfg, k->policy, &k->result, &k->err);
		k->wall_s = mono_s() - t0;
	}
}

void sim_run_tasks(const sim_trace *t, const sim_model *m, sim_task *tasks, size_t n)
{
	if (!n)
		return;
	/* without memory for an order: the tasks in the caller's order */
	size_t *order = malloc(n * sizeof *order);
	if (order) {
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		/* insertion sort by cost, stable (a batch is a handful) */
		for (size_t i = 1; i < n; i++) {
			size_t x = order[i], j = i;
			for (; j > 0 && task_cost(&tasks[order[j - 1]]) < task_cost(&tasks[x]);
			     j--)
				order[j] = order[j - 1];
			order[j] = x;
		}
	}
	task_pool pool = {.t = t, .m = m, .tasks = tasks, .order = order, .n = n};
	atomic_init(&pool.next, 0);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t workers = cpus > 0 ? (size_t)cpus : 1;
	if (workers > SIM_WORKERS)
		workers = SIM_WORKERS;
	if (workers > n)
		workers = n;
	/* the caller's thread is one of the workers (the only one when no
	 * thread can start) */
	pthread_t th[SIM_WORKERS];
	size_t started = 0;
	for (size_t w = 1; w < workers; w++)
		if (pthread_create(&th[started], NULL, task_worker, &pool) == 0)
			started++;
	(void)task_worker(&pool);
	for (size_t w = 0; w < started; w++)
		pthread_join(th[w], NULL);
	free(order);
}
