/*
 * mkdb.c - builds the state database that tests/test_cli_read.sh reads:
 * two experiments written through the real store API, with trials in every
 * interesting state, segments (one out of memory, one still running),
 * metrics, and segment log files.  Usage: mkdb DB LOGDIR
 *
 * Resulting ids (the shell test asserts them):
 *   experiment 1 "older" (min loss):  trial 1 completed loss 0.25 at 5 (segment 1),
 *                                     trial 2 failed, error with quotes/comma (segment 2)
 *   experiment 2 "digits" (max accuracy):
 *     trial 3 idx 0 {"lr":0.1,"layers":2}   completed, 0.9 at 9, segments 3, 4
 *     trial 4 idx 1 {"lr":0.01,"layers":3}  stopped, 0.95 at 3, segment 5 (no log)
 *     trial 5 idx 2 {"lr":0.001,"layers":4} running, segment 6 oom, 7 running
 *     trial 6 idx 3 {"lr":0.5,"layers":1}   pending
 *
 * `mkdb --devices DB PREFIX` builds instead the database that
 * tests/test_devices_cli.sh reads: one experiment "gpus", trials 1-4 with
 * one segment each (segment id = trial id), reserved on PREFIX-0, PREFIX-0,
 * PREFIX-1 and the host: 6000 MiB running, 2500 MiB running, 9000 MiB
 * completed, 700 MiB running.
 *
 * `mkdb --front DB` builds one experiment "tradeoff" of two objectives
 * (min f1, max f2), trials 1-4 completed with (f1, f2) = (1, 5), (2, 9),
 * (3, 4) and (0.5, 1): trial 3 is dominated by trial 1, the others are on
 * the front (tests/test_cli_read.sh: status and trials show both).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store.h"

static store *db;
static const char *logdir;

static void check(int rc, const rl_err *e, const char *what)
{
	if (rc < 0) {
		fprintf(stderr, "mkdb: %s: %s\n", what, e->msg);
		exit(1);
	}
}
#define CHECK(call) do { rl_err e_; rl_err_clear(&e_); rl_err *err = &e_; \
		check((call), &e_, #call); } while (0)

static int64_t trial(int64_t exp, int idx, const char *params, double t)
{
	int64_t id;
	CHECK(store_trial_insert(db, exp, idx, params, t, &id, err));
	return id;
}

/* A segment from placement to its end; writes its log file unless
 * nolog, and one metric per resource unit. */
static int64_t segment(int64_t tr, int seq, double from, double to, const char *device,
		       const store_segment_end *end, const char *metric, const double *values,
		       int nolog)
{
	int64_t id;
	char log[512];
	snprintf(log, sizeof log, "%s/t%lld-s%d.log", logdir, (long long)tr, seq);
	CHECK(store_segment_insert(db, tr, seq, from, to, 1000, &id, err));
	store_placement pl = {.device = device, .mem_reserved_mib = 1200, .compute_share = 50,
			      .basis = "hint", .log_path = log};
	CHECK(store_segment_place(db, id, &pl, 1700000100 + id, err));
	CHECK(store_segment_set_pid(db, id, 40000 + (pid_t)id, 123456 + (uint64_t)id, NULL, err));
	if (!nolog) {
		FILE *f = fopen(log, "w");
		if (!f) {
			perror(log);
			exit(1);
		}
		fprintf(f, "segment %d of trial %lld: training %g..%g\n", seq, (long long)tr, from,
			to);
		for (int r = (int)from + 1; values && r <= (int)to; r++)
			fprintf(f, "RELISH epoch=%d %s=%g\n", r, metric, values[r - (int)from - 1]);
		fclose(f);
	}
	for (int r = (int)from + 1; values && r <= (int)to; r++) {
		store_metric m = {.trial_id = tr, .segment_id = id, .resource = r,
				  .name = (char *)metric, .value = values[r - (int)from - 1],
				  .at = 1700000200 + r};
		CHECK(store_metrics_insert(db, &m, 1, err));
	}
	if (end)
		CHECK(store_segment_finish(db, id, end, err));
	return id;
}

/* The --devices database (see the header). */
static int devices_db(const char *path, const char *prefix)
{
	CHECK(store_open(path, 0, &db, err));
	store_experiment x = {.name = (char *)"gpus", .created_at = 1700000000,
			      .objective_metric = (char *)"accuracy", .mode = (char *)"max"};
	int64_t e;
	CHECK(store_experiment_create(db, &x, &e, err));
	static const struct {
		int gpu;              /* -1 host */
		int64_t mib;
		int running;
	} rows[] = {{0, 6000, 1}, {0, 2500, 1}, {1, 9000, 0}, {-1, 700, 1}};
	for (int i = 0; i < 4; i++) {
		int64_t t = trial(e, i, "{\"batch\":64}", 1700000001 + i), g;
		char dev[128];
		if (rows[i].gpu < 0)
			snprintf(dev, sizeof dev, "host");
		else
			snprintf(dev, sizeof dev, "%s-%d", prefix, rows[i].gpu);
		CHECK(store_segment_insert(db, t, 0, 0, 1, -1, &g, err));
		store_placement pl = {.device = dev, .mem_reserved_mib = rows[i].mib,
				      .compute_share = 50, .basis = "profile"};
		CHECK(store_segment_place(db, g, &pl, 1700000100, err));
		CHECK(store_trial_set_status(db, t, TRIAL_RUNNING, NULL, 1700000100, err));
		store_segment_end ok = {.status = SEG_COMPLETED, .exit_code = 0,
					.peak_mem_mib = 8000, .ended_at = 1700000200};
		if (!rows[i].running)
			CHECK(store_segment_finish(db, g, &ok, err));
	}
	store_close(db);
	return 0;
}

static int front_db(const char *path)
{
	CHECK(store_open(path, 0, &db, err));
	store_experiment x = {.name = (char *)"tradeoff", .created_at = 1700000000,
			      .objective_metric = (char *)"f1", .mode = (char *)"min"};
	int64_t e;
	CHECK(store_experiment_create(db, &x, &e, err));
	store_objective o[2] = {{(char *)"f1", (char *)"min"}, {(char *)"f2", (char *)"max"}};
	CHECK(store_objectives_set(db, e, o, 2, err));
	static const double v[4][2] = {{1, 5}, {2, 9}, {3, 4}, {0.5, 1}};
	for (int i = 0; i < 4; i++) {
		int64_t t = trial(e, i, "{\"x\":1}", 1700000001 + i);
		CHECK(store_trial_set_progress(db, t, 1, v[i][0], 1, 1700000100, err));
		CHECK(store_trial_set_values(db, t, v[i], 2, 0.0, err));
		CHECK(store_trial_set_status(db, t, TRIAL_COMPLETED, NULL, 1700000100, err));
	}
	CHECK(store_experiment_set_status(db, e, EXP_DONE, 1700003600, err));
	store_close(db);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "--devices") == 0)
		return devices_db(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "--front") == 0)
		return front_db(argv[2]);
	if (argc != 3) {
		fprintf(stderr, "usage: mkdb DB LOGDIR | mkdb --devices DB PREFIX | mkdb --front DB\n");
		return 2;
	}
	logdir = argv[2];
	CHECK(store_open(argv[1], 0, &db, err));
	store_segment_end ok = {.status = SEG_COMPLETED, .exit_code = 0, .peak_mem_mib = 900,
				.ended_at = 1700000500};
	store_segment_end bad = {.status = SEG_FAILED, .exit_code = 1, .peak_mem_mib = 300,
				 .ended_at = 1700000400, .message = "exit 1: \"nan\", loss diverged"};
	store_segment_end oom = {.status = SEG_OOM, .exit_code = 1, .peak_mem_mib = 1199,
				 .ended_at = 1700000300,
				 .message = "CUDA out of memory. Tried to allocate 2.00 GiB"};

	store_experiment older = {.name = (char *)"older", .created_at = 1690000000,
				  .objective_metric = (char *)"loss", .mode = (char *)"min",
				  .spec_path = (char *)"older.yaml"};
	int64_t e1;
	CHECK(store_experiment_create(db, &older, &e1, err));
	int64_t t1 = trial(e1, 0, "{\"lr\":0.2}", 1690000001);
	const double l1[] = {0.5, 0.4, 0.3, 0.27, 0.25};
	segment(t1, 0, 0, 5, "host", &ok, "loss", l1, 0);
	CHECK(store_trial_set_progress(db, t1, 5, 0.25, 5, 1690000100, err));
	CHECK(store_trial_set_status(db, t1, TRIAL_COMPLETED, NULL, 1690000100, err));
	int64_t t2 = trial(e1, 1, "{\"lr\":9}", 1690000002);
	segment(t2, 0, 0, 5, "host", &bad, "loss", NULL, 0);
	CHECK(store_trial_set_status(db, t2, TRIAL_FAILED, "exit 1: \"nan\", loss diverged",
				     1690000100, err));
	CHECK(store_experiment_set_status(db, e1, EXP_DONE, 1690003600, err));

	store_experiment digits = {.name = (char *)"digits", .created_at = 1700000000,
				   .objective_metric = (char *)"accuracy", .mode = (char *)"max",
				   .spec_path = (char *)"digits.yaml",
				   .spec_text = (char *)"name: digits\n"};
	int64_t e2;
	CHECK(store_experiment_create(db, &digits, &e2, err));
	int64_t t3 = trial(e2, 0, "{\"lr\":0.1,\"layers\":2}", 1700000001);
	int64_t t4 = trial(e2, 1, "{\"lr\":0.01,\"layers\":3}", 1700000002);
	int64_t t5 = trial(e2, 2, "{\"lr\":0.001,\"layers\":4}", 1700000003);
	trial(e2, 3, "{\"lr\":0.48300251266298522,\"layers\":1}", 1700000004);

	const double a3a[] = {0.5, 0.7, 0.8}, a3b[] = {0.82, 0.84, 0.86, 0.88, 0.89, 0.9};
	segment(t3, 0, 0, 3, "gpu0", &ok, "accuracy", a3a, 0);
	segment(t3, 1, 3, 9, "gpu0", &ok, "accuracy", a3b, 0);
	CHECK(store_trial_set_progress(db, t3, 9, 0.9, 9, 1700000500, err));
	CHECK(store_trial_set_status(db, t3, TRIAL_COMPLETED, NULL, 1700000500, err));

	const double a4[] = {0.6, 0.9, 0.95};
	segment(t4, 0, 0, 3, "gpu1", &ok, "accuracy", a4, 1); /* its log file is gone */
	CHECK(store_trial_set_progress(db, t4, 3, 0.95, 3, 1700000500, err));
	CHECK(store_trial_set_status(db, t4, TRIAL_STOPPED, NULL, 1700000500, err));

	int64_t g_oom = segment(t5, 0, 0, 3, "gpu0", &oom, "accuracy", NULL, 0);
	segment(t5, 1, 0, 3, "gpu1", NULL, "accuracy", NULL, 0);
	CHECK(store_trial_set_status(db, t5, TRIAL_RUNNING, NULL, 1700000300, err));
	CHECK(store_event_append(db, 1700000300, e2, t5, g_oom, "segment.oom",
				 "reservation raised to 2400 MiB", NULL, err));
	store_close(db);
	return 0;
}
