/*
 * mkbig.c - builds a large finished database through the real store API,
 * for the dashboard at scale (tests/test_web_scale.sh, bench/bench_web.sh):
 * one experiment "big" (max accuracy) of N trials run under a Hyperband-
 * like schedule (every trial trains epochs 0..1; a third of them go on to
 * 3, a ninth to 9, a 27th to 27; the others are stopped), each rung one
 * segment, placed on two GPUs three at a time (so segments share each
 * device), with one accuracy value per epoch, a measured peak under the
 * reservation, and every 50th trial's first segment out of memory and
 * re-placed with a larger reservation.  Its stored spec names the search
 * space (lr and weight_decay loguniform, dropout and a long-named warmup
 * fraction uniform, layers int, activation a choice: the dashboard's
 * parallel coordinates read their axes from it).  With E > 1, E - 1 small
 * finished experiments follow (three owners, done, failed and cancelled in
 * turn, created a minute apart: the experiments page's pages), and the
 * first of them holds the host's segments in the run's last hour: a probe
 * that reserves the whole host, small segments two at a time, one stopped
 * over its reservation (the devices page's memory scale).
 * Usage: mkbig DB N [E]
 * Prints "trials=N segments=S metrics=M experiments=E" on success.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static store *db;

static void check(int rc, const rl_err *e, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "mkbig: %s: %s\n", what, e->msg);
		exit(1);
	}
}
#define CHECK(call) do { rl_err e_; rl_err_clear(&e_); rl_err *err = &e_; \
		check((call), &e_, #call); } while (0)

static unsigned long long rng = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static const char *const gpus[] = {"GPU-0b7c3f5e-0000-4000-8000-00000000aa01",
				   "GPU-0b7c3f5e-0000-4000-8000-00000000aa02"};
#define SLOTS 3 /* segments per GPU at once */

/* Each slot's next free time: segment k goes to the earliest free slot. */
static double slot_free[2 * SLOTS];

static size_t n_seg, n_metric;

static void run_segment(int64_t tr, int seq, int from, int to, double quality, int oom,
			double *clock_end)
{
	size_t best = 0;
	for (size_t i = 1; i < 2 * SLOTS; i++)
		if (slot_free[i] < slot_free[best])
			best = i;
	double start = slot_free[best] + 0.5;
	double dur = (to - from) * (2.0 + uniform());
	int64_t id;
	int64_t reserve = 1800 + (int64_t)(uniform() * 1200);
	CHECK(store_segment_insert(db, tr, seq, from, to, reserve, &id, err));
	store_placement pl = {.device = gpus[best / SLOTS], .mem_reserved_mib = reserve,
			      .compute_share = 33, .basis = "profile", .log_path = NULL};
	CHECK(store_segment_place(db, id, &pl, start, err));
	n_seg++;
	if (oom) {
		store_segment_end end = {.status = SEG_OOM, .exit_code = 1,
					 .peak_mem_mib = reserve, .ended_at = start + 1.0,
					 .message = "CUDA out of memory. Tried to allocate 512.00 MiB"};
		CHECK(store_segment_finish(db, id, &end, err));
		slot_free[best] = start + 1.0;
		/* re-placed from the same checkpoint with a larger reservation */
		run_segment(tr, seq + 1, from, to, quality, 0, clock_end);
		return;
	}
	for (int r = from + 1; r <= to; r++) {
		double acc = quality * (1 - exp(-r / 6.0)) + 0.01 * (uniform() - 0.5);
		store_metric m = {.trial_id = tr, .segment_id = id, .resource = r,
				  .name = (char *)"accuracy", .value = acc,
				  .at = start + dur * (r - from) / (to - from)};
		CHECK(store_metrics_insert(db, &m, 1, err));
		n_metric++;
		CHECK(store_trial_set_progress(db, tr, r, acc, r, m.at, err));
	}
	CHECK(store_segment_set_util(db, id, 20 + 30 * uniform(), err));
	store_segment_end end = {.status = SEG_COMPLETED, .exit_code = 0,
				 .peak_mem_mib = reserve * (0.6 + 0.3 * uniform()),
				 .ended_at = start + dur};
	CHECK(store_segment_finish(db, id, &end, err));
	slot_free[best] = start + dur;
	*clock_end = start + dur;
}

/* One host segment of trial tr: reserved res MiB, peak MiB, over [a, b],
 * ending as status with message msg (NULL: none). */
static void host_segment(int64_t tr, int seq, int64_t res, int64_t peak, double a, double b,
			 seg_status status, const char *msg)
{
	int64_t id;
	CHECK(store_segment_insert(db, tr, seq, seq, seq + 1, res, &id, err));
	store_placement pl = {.device = "host", .mem_reserved_mib = res, .compute_share = 1,
			      .basis = "probe", .log_path = NULL};
	CHECK(store_segment_place(db, id, &pl, a, err));
	CHECK(store_segment_set_util(db, id, 60 + 30 * uniform(), err));
	store_segment_end end = {.status = status, .exit_code = status == SEG_COMPLETED ? 0 : -1,
				 .peak_mem_mib = peak, .ended_at = b, .message = msg};
	CHECK(store_segment_finish(db, id, &end, err));
	n_seg++;
}

/* E small finished experiments after the big one (the experiments page's
 * pages), the first holding the host's segments in the big run's last
 * hour (the devices page's memory scale). */
static void small_experiments(int e_n, double t0, double end)
{
	static const char *const owners[] = {"alice", "bob", "carol"};
	static const exp_status states[] = {EXP_DONE, EXP_FAILED, EXP_CANCELLED, EXP_DONE};
	store_device host = {.name = (char *)"host", .uuid = (char *)"host", .is_gpu = 0,
			     .mem_total_mib = 23567, .compute_total = 16};
	CHECK(store_device_put(db, &host, NULL, err));
	CHECK(store_begin(db, err));
	for (int i = 0; i < e_n; i++) {
		char name[32];
		snprintf(name, sizeof name, "small-%05d", i + 2);
		int k = i % 3;
		store_experiment x = {.name = name, .created_at = t0 + 60.0 * (i + 1),
				      .objective_metric = (char *)"loss", .mode = (char *)"min",
				      .spec_path = (char *)"small.yaml", .owner = (char *)owners[k],
				      .owner_uid = 1001 + k};
		int64_t id;
		CHECK(store_experiment_create(db, &x, &id, err));
		if (i == 0) {
			int64_t tr;
			CHECK(store_trial_insert(db, id, 0, "{\"x\":1}", end - 3600, &tr, err));
			double hs = end - 3000;
			/* a probe as large as the host, then small ones two at a time */
			host_segment(tr, 0, 23567, 13, hs, hs + 120, SEG_COMPLETED, NULL);
			for (int j = 0; j < 6; j++) {
				double a = hs + 150 + 400 * j + 200 * (j % 2);
				host_segment(tr, j + 1, 64 + 32 * j, 13 + 25 * j, a, a + 500, SEG_COMPLETED,
					     NULL);
			}
			host_segment(tr, 7, 128, 150, hs + 2700, hs + 2760, SEG_OVER_RESERVATION,
				     "over its memory reservation (reserved 128 MiB, peak 150 MiB): relish "
				     "stopped it at 150 MiB, above its reservation and margin, not for want "
				     "of memory");
			CHECK(store_trial_set_status(db, tr, TRIAL_COMPLETED, NULL, hs + 2800, err));
		}
		CHECK(store_experiment_set_status(db, id, states[i % 4], t0 + 60.0 * (i + 1) + 30,
						  err));
		if (i % 500 == 499) {
			CHECK(store_commit(db, err));
			CHECK(store_begin(db, err));
		}
	}
	CHECK(store_commit(db, err));
}

int main(int argc, char **argv)
{
	if ((argc != 3 && argc != 4) || atoi(argv[2]) <= 0 || (argc == 4 && atoi(argv[3]) <= 0)) {
		fprintf(stderr, "usage: mkbig DB N [E]\n");
		return 2;
	}
	int n = atoi(argv[2]);
	int n_exp = argc == 4 ? atoi(argv[3]) : 1;
	CHECK(store_open(argv[1], 0, &db, err));
	double t0 = 1767225600; /* 2026-01-01 */
	for (size_t i = 0; i < 2 * SLOTS; i++)
		slot_free[i] = t0;
	for (size_t g = 0; g < 2; g++) {
		store_device d = {.name = (char *)"NVIDIA H100 80GB HBM3", .uuid = (char *)gpus[g],
				  .is_gpu = 1, .mem_total_mib = 81559, .compute_total = 100};
		CHECK(store_device_put(db, &d, NULL, err));
	}
	char spec[1024];
	snprintf(spec, sizeof spec,
		 "{\"name\":\"big\",\"search\":{\"max_trials\":%d,\"space\":{"
		 "\"lr\":{\"type\":\"loguniform\",\"low\":0.0001,\"high\":0.1},"
		 "\"layers\":{\"type\":\"int\",\"low\":1,\"high\":6,\"log\":false},"
		 "\"activation\":{\"type\":\"choice\",\"values\":[\"relu\",\"gelu\",\"tanh\"]},"
		 "\"dropout\":{\"type\":\"uniform\",\"low\":0,\"high\":0.5},"
		 "\"weight_decay\":{\"type\":\"loguniform\",\"low\":1e-06,\"high\":0.01},"
		 "\"warmup_fraction_of_schedule\":{\"type\":\"uniform\",\"low\":0,\"high\":0.3}"
		 "}}}", n);
	store_experiment e = {.name = (char *)"big", .created_at = t0, .spec_text = spec,
			      .objective_metric = (char *)"accuracy", .mode = (char *)"max",
			      .spec_path = (char *)"big.yaml", .owner = (char *)"alice",
			      .owner_uid = 1001};
	int64_t eid;
	CHECK(store_experiment_create(db, &e, &eid, err));
	static const char *const acts[] = {"relu", "gelu", "tanh"};
	double end = t0;
	const int rungs[] = {1, 3, 9, 27};
	for (int i = 0; i < n; i++) {
		double lr = pow(10, -4 + 3 * uniform());
		int layers = 1 + (int)(uniform() * 6);
		const char *act = acts[(int)(uniform() * 3)];
		double dropout = 0.5 * uniform();
		double wd = pow(10, -6 + 4 * uniform()), warmup = 0.3 * uniform() * uniform();
		char params[384];
		snprintf(params, sizeof params,
			 "{\"lr\":%.6g,\"layers\":%d,\"activation\":\"%s\",\"dropout\":%.6f,"
			 "\"weight_decay\":%.6g,\"warmup_fraction_of_schedule\":%.6f}", lr, layers, act,
			 dropout, wd, warmup);
		/* the best lr is near 3e-3, more layers help a little, gelu a bit */
		double q = 0.95 - 0.08 * pow(log10(lr) + 2.5, 2) + 0.01 * layers -
			   0.1 * dropout * dropout + (act[0] == 'g' ? 0.02 : 0) +
			   0.03 * (uniform() - 0.5);
		if (q < 0.05)
			q = 0.05;
		CHECK(store_begin(db, err));
		int64_t tr;
		CHECK(store_trial_insert(db, eid, i, params, slot_free[0], &tr, err));
		/* how far it goes: 1 in 3^k reaches rung k */
		int top = 0;
		while (top < 3 && (i % (int)pow(3, top + 1)) == 0)
			top++;
		int seq = 0;
		for (int k = 0; k <= top; k++) {
			int from = k ? rungs[k - 1] : 0;
			run_segment(tr, seq, from, rungs[k], q, k == 0 && i % 50 == 7, &end);
			seq += (k == 0 && i % 50 == 7) ? 2 : 1;
		}
		CHECK(store_trial_set_status(db, tr, top == 3 ? TRIAL_COMPLETED : TRIAL_STOPPED, NULL,
					     end, err));
		CHECK(store_commit(db, err));
	}
	CHECK(store_experiment_set_status(db, eid, EXP_DONE, end, err));
	if (n_exp > 1)
		small_experiments(n_exp - 1, t0, end);
	store_close(db);
	printf("trials=%d segments=%zu metrics=%zu experiments=%d\n", n, n_seg, n_metric, n_exp);
	return 0;
}
