/*
 * mkhistory.c - builds a service's history through the real store API, for
 * tests/test_serve_history.sh: N ended experiments "h1".."hN" of two
 * owners (odd ids alice, uid 5001; even ids bob, uid 5002), created a
 * minute apart ending now, with two trials each (one completed with
 * accuracy id/1000, one stopped); every third one (ids 3, 6, ...) is
 * cancelled, the others done.  Usage: mkhistory DB N [METRICS]: METRICS
 * metric rows for each completed trial (default 0), so that removing an
 * experiment frees pages (test_prune).
 * Prints "experiments=N trials=T" on success.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "store/store.h"

static void check(int rc, const rl_err *e, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "mkhistory: %s: %s\n", what, e->msg);
		exit(1);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: mkhistory DB N [METRICS]\n");
		return 2;
	}
	long n = atol(argv[2]);
	long nm = argc == 4 ? atol(argv[3]) : 0;
	rl_err e;
	rl_err_clear(&e);
	store *s;
	check(store_open(argv[1], 0, &s, &e), &e, "open");
	check(store_begin(s, &e), &e, "begin");
	double now = (double)time(NULL);
	long trials = 0;
	for (long i = 1; i <= n; i++) {
		char name[32];
		snprintf(name, sizeof name, "h%ld", i);
		double at = now - (double)(n - i + 1) * 60.0;
		store_experiment x = {
			.name = name, .spec_text = (char *)"{}", .created_at = at,
			.objective_metric = (char *)"accuracy", .mode = (char *)"max",
			.owner_uid = i % 2 ? 5001 : 5002, .owner = (char *)(i % 2 ? "alice" : "bob"),
		};
		int64_t id, t;
		check(store_experiment_create(s, &x, &id, &e), &e, "experiment");
		for (int k = 0; k < 2; k++) {
			check(store_trial_insert(s, id, k, "{\"x\":1}", at, &t, &e), &e, "trial");
			if (k == 0)
				check(store_trial_set_progress(s, t, 1, (double)i / 1000.0, 1, at + 1, &e),
				      &e, "progress");
			for (long m = 0; k == 0 && m < nm; m++) {
				store_metric row = {.trial_id = t, .resource = (double)m,
						    .name = (char *)"train_loss_per_batch",
						    .value = 1.0 / (double)(m + 1), .at = at + 1};
				check(store_metrics_insert(s, &row, 1, &e), &e, "metric");
			}
			check(store_trial_set_status(s, t, k ? TRIAL_STOPPED : TRIAL_COMPLETED, NULL,
						     at + 2, &e), &e, "trial status");
			trials++;
		}
		check(store_experiment_set_status(s, id, i % 3 ? EXP_DONE : EXP_CANCELLED, at + 30,
						  &e), &e, "status");
	}
	check(store_commit(s, &e), &e, "commit");
	store_close(s);
	printf("experiments=%ld trials=%ld\n", n, trials);
	return 0;
}
