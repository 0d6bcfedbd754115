/*
 * test_api_encode.c - each resource's JSON encoder and decoder are each
 * other's inverse: what the CLI prints from a server's answer (decode,
 * then the same encoder or table) is what it prints from a database file.
 * Checked field by field and as text (encode(decode(encode(x))) ==
 * encode(x)), with unknown values (NAN, NULL, -1) among them; and a
 * decoder names the field that is wrong.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/encode.h"

static store_experiment exp_row(void)
{
	store_experiment e = {.id = 12, .name = (char *)"digits", .spec_path = (char *)"d.yaml",
			      .status = EXP_RUNNING, .created_at = 1714560000.25,
			      .finished_at = NAN, .objective_metric = (char *)"accuracy",
			      .mode = (char *)"max", .owner = (char *)"alice", .owner_uid = 1001};
	return e;
}

static void same_text(json_t *a, json_t *b)
{
	char *ta = api_json_text(a, 1), *tb = api_json_text(b, 1);
	assert_non_null(ta);
	assert_non_null(tb);
	assert_string_equal(ta, tb);
	free(ta);
	free(tb);
}

static void test_experiment_round_trip(void **state)
{
	(void)state;
	store_experiment e = exp_row();
	api_exp_summary sum = {.total = 5, .has_best = 1};
	sum.count[TRIAL_COMPLETED] = 3;
	sum.count[TRIAL_RUNNING] = 2;
	sum.best.id = 310;
	sum.best.objective = 0.9861;
	sum.best.objective_resource = 27;
	json_t *j = api_json_experiment(&e, &sum, 1714560312.75);
	store_experiment d;
	api_exp_summary ds;
	rl_err err;
	assert_int_equal(api_experiment_from_json(j, &d, &ds, &err), 0);
	assert_int_equal(d.id, 12);
	assert_string_equal(d.name, "digits");
	assert_string_equal(d.owner, "alice");
	assert_int_equal(d.owner_uid, 1001);
	assert_true(isnan(d.finished_at));
	assert_int_equal(ds.count[TRIAL_COMPLETED], 3);
	assert_int_equal(ds.best.id, 310);
	assert_true(ds.best.objective == 0.9861);
	json_t *j2 = api_json_experiment(&d, &ds, 1714560312.75);
	same_text(j, j2);
	/* an experiment without an owner or a best */
	store_experiment_fini(&d);
	e.owner = NULL;
	api_exp_summary none = {0};
	json_t *j3 = api_json_experiment(&e, &none, 1714560312.75);
	assert_true(json_is_null(json_object_get(j3, "owner_uid")));
	assert_true(json_is_null(json_object_get(j3, "best")));
	assert_int_equal(api_experiment_from_json(j3, &d, &ds, &err), 0);
	assert_null(d.owner);
	assert_int_equal(ds.has_best, 0);
	store_experiment_fini(&d);
	json_decref(j);
	json_decref(j2);
	json_decref(j3);
}

static void test_trial_round_trip(void **state)
{
	(void)state;
	store_experiment e = exp_row();
	store_trial t = {.id = 310, .experiment_id = 12, .idx = 17, .status = TRIAL_FAILED,
			 .params_json = (char *)"{\"lr\":0.0123,\"hidden\":128,\"act\":\"relu\"}",
			 .resource_done = 9, .objective = 0.1 + 0.2, .objective_resource = 9,
			 .error = NULL, .last_error = (char *)"exit code 1", .n_segments = 4,
			 .n_oom = 1, .last_oom = (char *)"CUDA out of memory", .created_at = 1.5,
			 .updated_at = 1714560290.7512345, .last_basis = (char *)"family",
			 .last_est_mib = 412, .last_peak_mib = 398, .last_util = NAN};
	json_t *j = api_json_trial(&e, &t);
	/* the trial's error is its own, else its last failed segment's */
	assert_string_equal(json_string_value(json_object_get(j, "error")), "exit code 1");
	store_trial d;
	rl_err err;
	assert_int_equal(api_trial_from_json(j, &d, &err), 0);
	assert_int_equal(d.status, TRIAL_FAILED);
	assert_true(d.objective == 0.1 + 0.2); /* every bit of a double */
	assert_true(d.updated_at == 1714560290.7512345);
	assert_int_equal(d.last_peak_mib, 398);
	assert_true(isnan(d.last_util));
	json_t *j2 = api_json_trial(&e, &d);
	same_text(j, j2);
	store_trial_fini(&d);
	json_decref(j);
	json_decref(j2);
}

static void test_segment_and_metric_round_trip(void **state)
{
	(void)state;
	store_experiment e = exp_row();
	store_segment g = {.id = 5, .trial_id = 310, .seq = 2, .resource_from = 3, .resource_to = 9,
			   .status = SEG_OOM, .exit_code = -1, .signal = 9, .device = (char *)"host",
			   .mem_reserved_mib = 512, .compute_share = 0.5, .basis = (char *)"oom",
			   .pid = 4242, .started_at = 10.25, .ended_at = NAN, .peak_mem_mib = -1,
			   .est_mem_mib = 300, .mean_util = NAN, .log_path = (char *)"/x/seg-2.log",
			   .message = (char *)"killed"};
	json_t *j = api_json_segment(&e, &g);
	store_segment d;
	rl_err err;
	assert_int_equal(api_segment_from_json(j, &d, &err), 0);
	assert_int_equal(d.status, SEG_OOM);
	assert_int_equal(d.exit_code, -1);
	assert_int_equal(d.peak_mem_mib, -1);
	json_t *j2 = api_json_segment(&e, &d);
	same_text(j, j2);
	store_segment_fini(&d);
	json_decref(j);
	json_decref(j2);

	store_metric m = {.trial_id = 310, .segment_id = 5, .resource = 4, .name = (char *)"loss",
			  .value = 0.25, .at = 99.5};
	j = api_json_metric(&e, &m);
	store_metric dm;
	assert_int_equal(api_metric_from_json(j, &dm, &err), 0);
	assert_string_equal(dm.name, "loss");
	j2 = api_json_metric(&e, &dm);
	same_text(j, j2);
	free(dm.name);
	json_decref(j);
	json_decref(j2);
}

static void test_decoder_names_the_field(void **state)
{
	(void)state;
	rl_err err;
	store_trial t;
	json_t *j = json_pack("{s:I, s:s, s:s}", "id", (json_int_t)3, "status", "running",
			      "resource", "nine");
	assert_int_equal(api_trial_from_json(j, &t, &err), RL_EPARSE);
	assert_non_null(strstr(err.msg, "\"resource\""));
	json_decref(j);
	j = json_pack("{s:I, s:s}", "id", (json_int_t)3, "status", "sleeping");
	assert_true(api_trial_from_json(j, &t, &err) < 0);
	json_decref(j);
	store_experiment e;
	j = json_pack("{s:s}", "experiment", "x");
	assert_int_equal(api_experiment_from_json(j, &e, NULL, &err), RL_EPARSE);
	assert_non_null(strstr(err.msg, "\"id\""));
	json_decref(j);
}

/* Summaries of many experiments read at once (a status read) are the ones
 * read one by one, for a few experiments and for many (two ways in
 * api_exp_summarise_all), as resources and as text. */
static void test_summarise_all_is_one_by_one(void **state)
{
	(void)state;
	char dir[] = "/tmp/relish-encode-XXXXXX", path[64], cmd[96];
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/state.db", dir);
	store *s;
	rl_err err;
	assert_int_equal(store_open(path, 0, &s, &err), 0);
	for (int k = 0; k < 12; k++) {
		char name[16];
		snprintf(name, sizeof name, "e%d", k);
		store_experiment e = {.name = name, .created_at = 1000 + k, .finished_at = NAN,
				      .objective_metric = (char *)"loss",
				      .mode = (char *)(k % 2 ? "min" : "max")};
		int64_t id, t;
		assert_int_equal(store_experiment_create(s, &e, &id, &err), 0);
		for (int i = 0; i < k % 5; i++) {
			assert_int_equal(store_trial_insert(s, id, i, "{}", 1001, &t, &err), 0);
			assert_int_equal(store_trial_set_progress(s, t, i + 1, 0.1 * ((i * 7 + k) % 4),
								  i + 1, 1002, &err), 0);
			assert_int_equal(store_trial_set_status(s, t, i % 2 ? TRIAL_COMPLETED
									    : TRIAL_RUNNING,
								NULL, 1003, &err), 0);
			if (i == 1)
				assert_int_equal(store_event_append(s, 1004, id, t, 0,
								    "segment.waiting", "memory",
								    NULL, &err), 0);
		}
		if (k == 4)
			assert_int_equal(store_experiment_set_status(s, id, EXP_DONE, 1100, &err), 0);
	}
	store_experiment *v;
	size_t n;
	assert_int_equal(store_experiment_list_brief(s, &v, &n, &err), 0);
	assert_int_equal(n, 12);
	size_t sizes[] = {12, 3};
	int waiting = 0;
	for (size_t z = 0; z < 2; z++) {
		size_t m = sizes[z];
		api_exp_summary all[12];
		assert_int_equal(api_exp_summarise_all(s, v, m, all, &err), 0);
		for (size_t i = 0; i < m; i++) {
			api_exp_summary one;
			assert_int_equal(api_exp_summarise(s, &v[i], &one, &err), 0);
			assert_memory_equal(one.count, all[i].count, sizeof one.count);
			assert_int_equal(one.has_best, all[i].has_best);
			assert_int_equal(one.n_wait, all[i].n_wait);
			waiting += (int)one.n_wait;
			json_t *a = api_json_experiment(&v[i], &one, 2000);
			json_t *b = api_json_experiment(&v[i], &all[i], 2000);
			same_text(a, b);
			json_decref(a);
			json_decref(b);
			/* and the best is store_trial_best's */
			store_trial t;
			rl_err e2;
			int rc = store_trial_best(s, v[i].id, &t, &e2);
			assert_int_equal(rc == 0, one.has_best);
			if (rc == 0) {
				assert_int_equal(t.id, one.best.id);
				assert_float_equal(t.objective, one.best.objective, 0);
				store_trial_fini(&t);
			}
			api_exp_summary_fini(&one);
			api_exp_summary_fini(&all[i]);
		}
	}
	assert_true(waiting > 0); /* the done experiment's wait is not shown */
	store_experiments_free(v, n);
	store_close(s);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_experiment_round_trip),
		cmocka_unit_test(test_trial_round_trip),
		cmocka_unit_test(test_segment_and_metric_round_trip),
		cmocka_unit_test(test_decoder_names_the_field),
		cmocka_unit_test(test_summarise_all_is_one_by_one),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
