/*
 * test_engine.c - the experiment engine driven by a small discrete-event
 * simulation in the test (virtual clock, a fake learning curve that is a
 * function of the parameters and the resource; no processes): budget and
 * concurrency limits, the work order, final states, the best trial,
 * resource saved by ASHA, objective modes, failures and retries, and
 * restoring after a restart.
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

#include "search/engine.h"

static param_def params[2] = {
	{.name = "x", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
	{.name = "y", .kind = PARAM_UNIFORM, .low = 0, .high = 1},
};

static spec make_spec(objective_mode mode, schedule_algo algo, int max_trials, int conc)
{
	spec sp;
	memset(&sp, 0, sizeof sp);
	sp.name = "t";
	sp.source = "exp.yaml";
	sp.objective.metric = "loss";
	sp.objective.mode = mode;
	sp.search.algorithm = SEARCH_RANDOM;
	sp.search.seed = 7;
	sp.search.max_trials = max_trials;
	sp.search.max_concurrent = conc;
	sp.search.space = (space){.n = 2, .params = params};
	sp.schedule.algorithm = algo;
	sp.schedule.min = 1;
	sp.schedule.max = 27;
	sp.schedule.reduction_factor = 3;
	sp.schedule.grace = 5;
	return sp;
}

/* The fake learning curve: a quality term of the parameters plus a term
 * that shrinks with training.  Mode max reports 2 - loss (an "accuracy"). */
static double fake_loss(const config *c, double r)
{
	double x = value_as_double(&c->v[0]), y = value_as_double(&c->v[1]);
	return (x - 0.3) * (x - 0.3) + 0.5 * (y - 0.6) * (y - 0.6) + 1.0 / (1.0 + r);
}

static double side_value(const char *name, const config *c)
{
	return !strcmp(name, "cost") ? value_as_double(&c->v[1]) : value_as_double(&c->v[0]);
}

/* ---- the simulated driver -------------------------------------------------- */

typedef struct sim_seg {
	uint64_t trial;
	const config *cfg;
	double from, to, end;
} sim_seg;

typedef struct log_row {
	uint64_t trial;
	double from, to;
	int is_new, is_retry;
	engine_outcome oc;
	double value;
} log_row;

enum { MAX_RUN = 64, MAX_LOG = 4096, MAX_TRIALS = 256 };

typedef struct sim {
	engine *e;
	objective_mode mode;
	double now;
	size_t n_run;
	sim_seg run[MAX_RUN];
	size_t n_log;
	log_row log[MAX_LOG];
	double consumed;            /* resource trained, summed over segments */
	size_t max_running;
	int waiting[MAX_TRIALS];    /* continuation queued, not yet handed out */
	int new_before_cont;        /* a new trial was handed out while one waited */
	int cont_while_creating;    /* continuations handed out before the budget ended */
	uint64_t created;
} sim;

static void sim_fill(sim *s)
{
	engine_work w;
	rl_err err;
	int rc;
	while ((rc = engine_next(s->e, &w, &err)) == 1) {
		assert_true(s->n_run < MAX_RUN);
		assert_true(w.trial < MAX_TRIALS);
		if (w.is_new_trial) {
			for (size_t i = 0; i < MAX_TRIALS; i++)
				if (s->waiting[i])
					s->new_before_cont++;
			s->created++;
		} else if (!w.is_retry) {
			assert_true(s->waiting[w.trial]);
			s->waiting[w.trial] = 0;
			if (engine_running(s->e) > 0)
				s->cont_while_creating++;
		}
		/* Trials run at different speeds so that they arrive at rungs in
		 * an order other than their index. */
		double speed = 1.0 + 0.37 * (double)(w.trial % 4);
		s->run[s->n_run++] = (sim_seg){w.trial, w.cfg, w.from, w.to,
					       s->now + (w.to - w.from) * speed};
		if (engine_running(s->e) > s->max_running)
			s->max_running = engine_running(s->e);
	}
	if (rc < 0)
		fail_msg("engine_next: %s", err.msg);
}

/* Finish the running segment that ends first (ties: lower trial index). */
static void sim_step(sim *s)
{
	assert_true(s->n_run > 0);
	size_t k = 0;
	for (size_t i = 1; i < s->n_run; i++)
		if (s->run[i].end < s->run[k].end ||
		    (s->run[i].end == s->run[k].end && s->run[i].trial < s->run[k].trial))
			k = i;
	sim_seg g = s->run[k];
	s->run[k] = s->run[--s->n_run];
	s->now = g.end;
	rl_err err;
	/* The trial prints its objective after every whole unit of resource. */
	for (double r = floor(g.from) + 1; r <= g.to; r += 1) {
		double l = fake_loss(g.cfg, r);
		assert_int_equal(engine_report(s->e, g.trial, r, s->mode == MODE_MAX ? 2 - l : l,
					       &err), 0);
		/* Side metrics (several objectives, constraints): "cost" is y,
		 * "mem" is x, both known from the start. */
		for (size_t q = 0; q < engine_n_side(s->e); q++)
			assert_int_equal(engine_report_side(s->e, g.trial, q,
							    side_value(engine_side_metric(s->e, q), g.cfg),
							    &err), 0);
	}
	engine_decision d;
	assert_int_equal(engine_segment_done(s->e, g.trial, 1, g.to, &d, &err), 0);
	assert_true(s->n_log < MAX_LOG);
	s->log[s->n_log++] = (log_row){g.trial, g.from, g.to, g.from == 0, 0, d.outcome, d.value};
	s->consumed += g.to - g.from;
	if (d.outcome == ENG_CONTINUE || d.outcome == ENG_PROMOTE)
		s->waiting[g.trial] = 1;
}

static void sim_run(sim *s, size_t max_steps)
{
	for (size_t i = 0; i < max_steps && !engine_done(s->e); i++) {
		sim_fill(s);
		if (s->n_run == 0)
			break;
		sim_step(s);
	}
}

static sim *sim_new(const spec *sp)
{
	sim *s = calloc(1, sizeof *s);
	assert_non_null(s);
	rl_err err;
	if (engine_new(sp, &s->e, &err) < 0)
		fail_msg("engine_new: %s", err.msg);
	s->mode = sp->objective.mode;
	return s;
}

static void sim_free(sim *s)
{
	engine_free(s->e);
	free(s);
}

/* ---- a whole experiment ----------------------------------------------------- */

static void test_asha_experiment(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 40, 4);
	sim *s = sim_new(&sp);
	sim_run(s, 10000);
	assert_true(engine_done(s->e));
	assert_int_equal(s->created, 40);
	assert_int_equal(engine_n_trials(s->e), 40);
	assert_int_equal(s->max_running, 4);
	assert_int_equal(s->new_before_cont, 0);
	assert_true(s->cont_while_creating > 0);

	size_t counts[TRIAL_N_STATES];
	engine_counts(s->e, counts);
	assert_int_equal(counts[TRIAL_COMPLETED] + counts[TRIAL_STOPPED], 40);
	assert_true(counts[TRIAL_COMPLETED] >= 1);
	assert_true(counts[TRIAL_STOPPED] >= 20);

	/* Every boundary is a rung; each trial's curve holds one value per unit. */
	uint64_t want_best = UINT64_MAX;
	double want_val = INFINITY;
	for (uint64_t i = 0; i < 40; i++) {
		engine_trial_view v;
		rl_err err;
		assert_int_equal(engine_trial(s->e, i, &v, &err), 0);
		for (size_t b = 0; b < v.n_boundaries; b++) {
			double r = v.boundaries[b].resource;
			assert_true(r == 1 || r == 3 || r == 9 || r == 27);
		}
		assert_int_equal(v.n_reports, (size_t)v.resource);
		assert_float_equal(v.value, fake_loss(v.cfg, v.resource), 1e-12);
		if (v.state == TRIAL_COMPLETED) {
			assert_true(v.resource == 27);
			if (v.value < want_val) {
				want_val = v.value;
				want_best = i;
			}
		}
	}
	engine_trial_view best;
	rl_err err;
	assert_int_equal(engine_best(s->e, &best, &err), 0);
	assert_int_equal(best.index, want_best);
	assert_true(best.value == want_val);
	assert_int_equal(best.state, TRIAL_COMPLETED);

	/* Training every trial to max would cost 40 * 27 = 1080. */
	print_message("asha: %zu completed, %zu stopped, resource %.0f of %d (%.1f%%)\n",
		      counts[TRIAL_COMPLETED], counts[TRIAL_STOPPED], s->consumed, 40 * 27,
		      100 * s->consumed / (40 * 27));
	assert_true(s->consumed < 0.35 * 40 * 27);
	engine_work w;
	assert_int_equal(engine_next(s->e, &w, &err), 0);
	sim_free(s);
}

/* Mode max with values 2 - loss takes exactly the decisions mode min takes
 * with the loss itself. */
static void test_mode_max_mirrors_min(void **state)
{
	(void)state;
	spec a = make_spec(MODE_MIN, SCHED_ASHA, 30, 3);
	spec b = make_spec(MODE_MAX, SCHED_ASHA, 30, 3);
	sim *sa = sim_new(&a), *sb = sim_new(&b);
	sim_run(sa, 10000);
	sim_run(sb, 10000);
	assert_int_equal(sa->n_log, sb->n_log);
	size_t stops = 0;
	for (size_t i = 0; i < sa->n_log; i++) {
		assert_int_equal(sa->log[i].trial, sb->log[i].trial);
		assert_true(sa->log[i].to == sb->log[i].to);
		assert_int_equal(sa->log[i].oc, sb->log[i].oc);
		assert_float_equal(sb->log[i].value, 2 - sa->log[i].value, 1e-12);
		stops += sa->log[i].oc == ENG_STOP;
	}
	assert_true(stops > 0);
	engine_trial_view ba, bb;
	rl_err err;
	assert_int_equal(engine_best(sa->e, &ba, &err), 0);
	assert_int_equal(engine_best(sb->e, &bb, &err), 0);
	assert_int_equal(ba.index, bb.index);
	assert_float_equal(bb.value, 2 - ba.value, 1e-12);
	sim_free(sa);
	sim_free(sb);
}

/* Hyperband and the median rule drive the same loop to the end. */
static void test_other_stoppers(void **state)
{
	(void)state;
	static const schedule_algo algos[] = {SCHED_HYPERBAND, SCHED_MEDIAN, SCHED_NONE};
	for (size_t k = 0; k < 3; k++) {
		spec sp = make_spec(MODE_MIN, algos[k], 20, 5);
		sp.schedule.segment = algos[k] == SCHED_MEDIAN ? 3 : 0;
		sim *s = sim_new(&sp);
		sim_run(s, 10000);
		assert_true(engine_done(s->e));
		size_t counts[TRIAL_N_STATES];
		engine_counts(s->e, counts);
		assert_int_equal(counts[TRIAL_COMPLETED] + counts[TRIAL_STOPPED], 20);
		if (algos[k] == SCHED_NONE) {
			/* One segment 0..max per trial, nothing stopped. */
			assert_int_equal(s->n_log, 20);
			assert_int_equal(counts[TRIAL_COMPLETED], 20);
			assert_true(s->consumed == 20 * 27);
		} else {
			assert_true(counts[TRIAL_STOPPED] > 0);
			assert_true(s->consumed < 20 * 27);
		}
		print_message("%s: %zu completed, %zu stopped, resource %.0f of %d\n",
			      (const char *[]){"none", "asha", "hyperband", "median"}[algos[k]], counts[TRIAL_COMPLETED],
			      counts[TRIAL_STOPPED], s->consumed, 20 * 27);
		sim_free(s);
	}
}

/* ---- restart ------------------------------------------------------------------ */

/*
 * Run A partway, "crash" with segments in flight, build B from what a store
 * would hold (each trial's state, curve and boundary values; in-flight
 * trials stored as running), and requeue A's in-flight segments.  From
 * there both must hand out the same work and take the same decisions.
 */
/* paused: the cut comes right after a segment that queued a continuation
 * (early stopping), so a paused trial is restored too. */
static void restore_equivalence(const spec *spp, int paused)
{
	spec sp = *spp;
	sim *a = sim_new(&sp);
	/* Run until 20 segments are done and the last one queued a
	 * continuation; the crash comes before it starts: one trial (at least)
	 * paused, three in flight. */
	for (;;) {
		sim_fill(a);
		sim_step(a);
		engine_outcome last = a->log[a->n_log - 1].oc;
		if (a->n_log >= 20 && (!paused || last == ENG_CONTINUE || last == ENG_PROMOTE))
			break;
	}
	assert_int_equal(a->n_run, 3);
	assert_false(engine_done(a->e));

	sim *b = sim_new(&sp);
	rl_err err;
	size_t n_restored = 0, n_paused = 0;
	for (uint64_t i = 0; i < engine_n_trials(a->e); i++) {
		engine_trial_view v;
		assert_int_equal(engine_trial(a->e, i, &v, &err), 0);
		engine_trial_record rec = {
			.index = i, .cfg = v.cfg, .state = v.state,
			.n_reports = v.n_reports, .reports = v.reports,
			.n_boundaries = v.n_boundaries, .boundaries = v.boundaries,
		};
		if (engine_restore_trial(b->e, &rec, &err) < 0)
			fail_msg("restore %llu: %s", (unsigned long long)i, err.msg);
		n_restored++;
		n_paused += v.state == TRIAL_PAUSED;
	}
	/* The crash: A's in-flight segments are interrupted and requeued. */
	for (size_t i = 0; i < a->n_run; i++)
		assert_int_equal(engine_requeue(a->e, a->run[i].trial, a->run[i].from,
						a->run[i].to, &err), 0);
	a->n_run = 0;
	size_t cut = a->n_log;
	assert_true(n_restored > 4 && n_restored < (size_t)sp.search.max_trials);
	print_message("restore: %zu trials restored (%zu paused), 3 in flight\n", n_restored,
		      n_paused);

	size_t ca[TRIAL_N_STATES], cb[TRIAL_N_STATES];
	engine_counts(a->e, ca);
	engine_counts(b->e, cb);
	assert_memory_equal(ca, cb, sizeof ca);
	assert_int_equal(cb[TRIAL_PENDING], 3);
	assert_true(!paused || cb[TRIAL_PAUSED] >= 1);

	/* Both continue; the first three pieces of work are the re-runs. */
	a->now = b->now = 0;
	for (size_t k = 0; k < 2; k++) {
		sim *s = k ? b : a;
		engine_work w;
		uint64_t prev = 0;
		for (int j = 0; j < 3; j++) {
			assert_int_equal(engine_next(s->e, &w, &err), 1);
			assert_true(w.is_retry);
			assert_true(j == 0 || w.trial > prev);
			prev = w.trial;
			double speed = 1.0 + 0.37 * (double)(w.trial % 4);
			s->run[s->n_run++] = (sim_seg){w.trial, w.cfg, w.from, w.to,
						       (w.to - w.from) * speed};
		}
		memset(s->waiting, 0, sizeof s->waiting); /* queued before the cut */
		s->new_before_cont = 0;
	}
	/* Continuations restored from the store are not tracked by the sim. */
	for (size_t k = 0; k < 2; k++) {
		sim *s = k ? b : a;
		for (size_t i = 0; i < 40 && !engine_done(s->e); i++) {
			engine_trial_view v;
			if (engine_trial(s->e, i, &v, &err) == 0 && v.state == TRIAL_PAUSED)
				s->waiting[i] = 1;
		}
	}
	size_t b0 = b->n_log;
	sim_run(a, 10000);
	sim_run(b, 10000);
	assert_true(engine_done(a->e) && engine_done(b->e));
	size_t n_after = a->n_log - cut;
	assert_int_equal(n_after, b->n_log - b0);
	assert_true(n_after > 20);
	for (size_t i = 0; i < n_after; i++) {
		const log_row *x = &a->log[cut + i], *y = &b->log[b0 + i];
		if (x->trial != y->trial || x->from != y->from || x->to != y->to ||
		    x->oc != y->oc || x->value != y->value)
			fail_msg("after restart, step %zu: A trial %llu %g-%g outcome %d, "
				 "B trial %llu %g-%g outcome %d", i, (unsigned long long)x->trial,
				 x->from, x->to, x->oc, (unsigned long long)y->trial, y->from,
				 y->to, y->oc);
	}
	engine_counts(a->e, ca);
	engine_counts(b->e, cb);
	assert_memory_equal(ca, cb, sizeof ca);
	engine_trial_view va, vb;
	assert_int_equal(engine_best(a->e, &va, &err), 0);
	assert_int_equal(engine_best(b->e, &vb, &err), 0);
	assert_int_equal(va.index, vb.index);
	sim_free(a);
	sim_free(b);
}

static void test_restore_equivalence(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 40, 4);
	restore_equivalence(&sp, 1);
}

/* With TPE the three trials in flight at the crash (no boundary yet) are
 * pending in the model; restored, they must be pending again, or the next
 * proposals differ. */
static void test_restore_equivalence_tpe(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 50, 4);
	sp.search.algorithm = SEARCH_TPE;
	sp.schedule.algorithm = SCHED_NONE;
	sp.schedule.min = sp.schedule.max = 1;
	sp.schedule.segment = 0;
	restore_equivalence(&sp, 0);
}

/* Runs an experiment to the end; the configurations of its trials. */
static void run_configs(const spec *sp, config *out, size_t n)
{
	sim *s = sim_new(sp);
	sim_run(s, 100000);
	assert_true(engine_done(s->e));
	for (size_t i = 0; i < n; i++) {
		engine_trial_view v;
		assert_int_equal(engine_trial(s->e, i, &v, NULL), 0);
		assert_int_equal(config_copy(&out[i], v.cfg, NULL), 0);
	}
	sim_free(s);
}

static int same_config(const config *a, const config *b)
{
	for (size_t i = 0; i < a->n; i++)
		if (!value_equal(&a->v[i], &b->v[i]))
			return 0;
	return 1;
}

/* The engine tells TPE of every trial it starts: with four at a time,
 * pending: worst and pending: ignore propose differently once the model is
 * on (trials 0-12 are start-up draws: fewer than 10 results when they are
 * asked for); one at a time, nothing is pending at a proposal and both are
 * the same experiment. */
static void test_pending_reaches_tpe(void **state)
{
	(void)state;
	enum { N = 30 };
	config w[N], ig[N];
	for (int conc = 1; conc <= 4; conc += 3) {
		spec sp = make_spec(MODE_MIN, SCHED_NONE, N, conc);
		sp.search.algorithm = SEARCH_TPE;
		sp.schedule.max = 1;
		sp.search.pending = PENDING_WORST;
		run_configs(&sp, w, N);
		sp.search.pending = PENDING_IGNORE;
		run_configs(&sp, ig, N);
		int differ = 0;
		for (int i = 0; i < N; i++) {
			if (i < 13)
				assert_true(same_config(&w[i], &ig[i]));
			differ += !same_config(&w[i], &ig[i]);
			config_fini(&w[i]);
			config_fini(&ig[i]);
		}
		print_message("max_concurrent %d: %d of %d trials differ\n", conc, differ, N);
		if (conc == 1)
			assert_int_equal(differ, 0);
		else
			assert_true(differ >= N - 13 - 2);
	}
}

/* A segment still running after a restart (its container was adopted):
 * trial 0 ran 1 -> 3 at the crash, after its boundary at 1. */
static void test_adopt(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 10, 2);
	engine *e;
	rl_err err;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	config c;
	assert_int_equal(config_init(&c, 2, &err), 0);
	c.v[0] = (rl_value){.type = VAL_FLOAT, .f = 0.3};
	c.v[1] = (rl_value){.type = VAL_FLOAT, .f = 0.6};
	engine_point b[1] = {{1, 0.5}};
	engine_trial_record rec = {.index = 0, .cfg = &c, .state = TRIAL_RUNNING,
				   .n_reports = 1, .reports = b, .n_boundaries = 1, .boundaries = b};
	assert_int_equal(engine_restore_trial(e, &rec, &err), 0);
	engine_work w;
	assert_int_equal(engine_adopt(e, 5, 1, 3, &w, &err), RL_ENOTFOUND);
	assert_int_equal(engine_adopt(e, 0, 1, 9, &w, &err), RL_EINVAL);
	assert_int_equal(engine_running(e), 0);
	assert_int_equal(engine_adopt(e, 0, 1, 3, &w, &err), 0);
	assert_int_equal(w.trial, 0);
	assert_true(w.from == 1 && w.to == 3 && w.is_retry && !w.is_new_trial);
	assert_int_equal(engine_running(e), 1);
	engine_trial_view v;
	assert_int_equal(engine_trial(e, 0, &v, &err), 0);
	assert_int_equal(v.state, TRIAL_RUNNING);
	/* Adopted once: no re-run left to adopt, and engine_next goes on
	 * with a new trial instead of handing the segment out again. */
	assert_int_equal(engine_adopt(e, 0, 1, 3, &w, &err), RL_EINVAL);
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_int_equal(w.trial, 1);
	assert_true(w.is_new_trial);
	/* It ends as any running segment does. */
	assert_int_equal(engine_report(e, 0, 3, 0.25, &err), 0);
	engine_decision dec;
	assert_int_equal(engine_segment_done(e, 0, 1, 3, &dec, &err), 0);
	assert_int_equal(engine_running(e), 1);
	config_fini(&c);
	engine_free(e);
}

/*
 * A segment whose end the trial's curve already holds is complete without
 * printing it again: relish stored the value at 3 (read live, or taken
 * back from the log of a segment a killed relish left), the trial had
 * saved its checkpoint at 3, and the re-run of 1-3 trains and prints
 * nothing (issue 30 item 1: such a re-run failed "ended without reporting
 * the objective").  A value short of the end does not count.
 */
static void test_end_already_reported(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 2, 2);
	engine *e;
	rl_err err;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	config c;
	assert_int_equal(config_init(&c, 2, &err), 0);
	c.v[0] = (rl_value){.type = VAL_FLOAT, .f = 0.3};
	c.v[1] = (rl_value){.type = VAL_FLOAT, .f = 0.6};
	engine_point rep[3] = {{1, 0.5}, {2, 0.45}, {3, 0.25}}, bnd[1] = {{1, 0.5}};
	engine_trial_record rec = {.index = 0, .cfg = &c, .state = TRIAL_RUNNING,
				   .n_reports = 3, .reports = rep, .n_boundaries = 1, .boundaries = bnd};
	assert_int_equal(engine_restore_trial(e, &rec, &err), 0);
	rec.index = 1;
	rec.n_reports = 2; /* this one got to 2 only */
	assert_int_equal(engine_restore_trial(e, &rec, &err), 0);
	engine_work w;
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 0 && w.from == 1 && w.to == 3);
	engine_decision d;
	assert_int_equal(engine_segment_done(e, 0, 1, -1, &d, &err), 0);
	assert_int_not_equal(d.outcome, ENG_FAILED);
	assert_true(d.resource == 3 && d.value == 0.25);
	engine_trial_view v;
	assert_int_equal(engine_trial(e, 0, &v, &err), 0);
	assert_true(v.resource == 3 && v.value == 0.25);
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 1 && w.from == 1 && w.to == 3);
	assert_int_equal(engine_segment_done(e, 1, 1, -1, &d, &err), 0);
	assert_int_equal(d.outcome, ENG_FAILED);
	assert_non_null(strstr(d.reason, "without reporting the objective"));
	config_fini(&c);
	engine_free(e);
}

static void test_restore_errors(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 10, 2);
	engine *e;
	rl_err err;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	config c;
	assert_int_equal(config_init(&c, 2, &err), 0);
	c.v[0] = (rl_value){.type = VAL_FLOAT, .f = 0.3};
	c.v[1] = (rl_value){.type = VAL_FLOAT, .f = 0.6};
	engine_point bad[2] = {{3, 0.5}, {1, 0.4}};
	engine_trial_record rec = {.index = 2, .cfg = &c, .state = TRIAL_PAUSED,
				   .n_boundaries = 2, .boundaries = bad};
	assert_int_equal(engine_restore_trial(e, &rec, &err), RL_EINVAL);
	assert_non_null(strstr(err.msg, "not positive and increasing"));
	/* A trial whose last boundary is max completed, whatever was stored. */
	engine_point good[4] = {{1, 0.5}, {3, 0.4}, {9, 0.3}, {27, 0.2}};
	rec.boundaries = good;
	rec.n_boundaries = 4;
	assert_int_equal(engine_restore_trial(e, &rec, &err), 0);
	assert_int_equal(engine_restore_trial(e, &rec, &err), RL_EEXISTS);
	engine_trial_view v;
	assert_int_equal(engine_trial(e, 2, &v, &err), 0);
	assert_int_equal(v.state, TRIAL_COMPLETED);
	/* New trials continue after the largest restored index. */
	engine_work w;
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_int_equal(w.trial, 3);
	assert_true(w.is_new_trial);
	rec.index = 0;
	assert_int_equal(engine_restore_trial(e, &rec, &err), RL_EINVAL);
	config_fini(&c);
	engine_free(e);
}

/* ---- failures, retries and the best trial ---------------------------------- */

static void done_ok(engine *e, uint64_t t, double reached, engine_outcome want, double next)
{
	engine_decision d;
	rl_err err;
	assert_int_equal(engine_segment_done(e, t, 1, reached, &d, &err), 0);
	if (d.outcome != want || (want <= ENG_PROMOTE && d.next_to != next))
		fail_msg("trial %llu: outcome %d next %g, want %d next %g",
			 (unsigned long long)t, d.outcome, d.next_to, want, next);
}

/* engine_next_started hands out started trials' next segments, never a
 * new trial (a driver's full admission window, SCHED_ADMIT_WINDOW). */
static void test_next_started(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_NONE, 3, 3);
	sp.schedule.max = 4;
	sp.schedule.segment = 2;
	engine *e;
	rl_err err;
	engine_work w;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	assert_int_equal(engine_next_started(e, &w, &err), 0); /* nothing started */
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 0 && w.is_new_trial);
	assert_int_equal(engine_next_started(e, &w, &err), 0); /* trial 0 runs */
	assert_int_equal(engine_report(e, 0, 2, 0.5, &err), 0);
	done_ok(e, 0, 2, ENG_CONTINUE, 4);
	assert_int_equal(engine_next_started(e, &w, &err), 1);
	assert_true(w.trial == 0 && !w.is_new_trial && w.from == 2 && w.to == 4);
	assert_int_equal(engine_next_started(e, &w, &err), 0);
	assert_int_equal(engine_next(e, &w, &err), 1); /* a new one still may */
	assert_true(w.trial == 1 && w.is_new_trial);
	engine_free(e);
}

static void test_failures_and_retries(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_NONE, 2, 1);
	sp.schedule.max = 4;
	sp.schedule.segment = 2;
	engine *e;
	rl_err err;
	engine_work w;
	engine_decision d;
	size_t counts[TRIAL_N_STATES];
	assert_int_equal(engine_new(&sp, &e, &err), 0);

	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 0 && w.from == 0 && w.to == 2 && w.is_new_trial);
	assert_int_equal(engine_next(e, &w, &err), 0); /* max_concurrent 1 */
	/* Exited cleanly without printing the objective: a failure. */
	assert_int_equal(engine_segment_done(e, 0, 1, 2, &d, &err), 0);
	assert_int_equal(d.outcome, ENG_FAILED);
	assert_string_equal(d.reason, "segment 0-2 ended without reporting the objective \"loss\"");
	assert_true(isnan(d.value));
	engine_counts(e, counts);
	assert_int_equal(counts[TRIAL_PENDING], 1);
	assert_false(engine_done(e));
	assert_int_equal(engine_report(e, 0, 1, 0.5, &err), RL_EINVAL);
	assert_int_equal(engine_report(e, 7, 1, 0.5, &err), RL_ENOTFOUND);

	/* The driver retries: the re-run comes before anything else. */
	assert_int_equal(engine_requeue(e, 0, 0, 2, &err), 0);
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 0 && w.from == 0 && w.to == 2 && w.is_retry && !w.is_new_trial);
	assert_int_equal(engine_report(e, 0, 1, 0.5, &err), 0);
	assert_int_equal(engine_report(e, 0, 2, 0.4, &err), 0);
	done_ok(e, 0, 2, ENG_CONTINUE, 4);

	/* The continuation of trial 0 comes before new trial 1. */
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 0 && w.from == 2 && w.to == 4 && !w.is_retry && !w.is_new_trial);
	assert_int_equal(engine_segment_done(e, 0, 0, -1, &d, &err), 0);
	assert_int_equal(d.outcome, ENG_FAILED);
	assert_string_equal(d.reason, "segment 2-4 failed");
	assert_true(d.resource == 2);
	assert_int_equal(engine_trial_failed(e, 0, "out of retries", &err), 0);
	assert_int_equal(engine_trial_failed(e, 0, NULL, &err), RL_EINVAL);

	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 1 && w.is_new_trial);
	assert_int_equal(engine_report(e, 1, 1, 0.9, &err), 0);
	assert_int_equal(engine_segment_done(e, 1, 1, 1, &d, &err), 0);
	assert_int_equal(d.outcome, ENG_FAILED);
	assert_string_equal(d.reason, "segment 0-2 ended at resource 1, before its end");
	assert_int_equal(engine_requeue(e, 1, 1, 2, &err), RL_EINVAL); /* no checkpoint at 1 */
	assert_int_equal(engine_requeue(e, 1, 0, 2, &err), 0);
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_true(w.trial == 1 && w.is_retry);
	assert_int_equal(engine_report(e, 1, 2, 0.3, &err), 0);
	done_ok(e, 1, 2, ENG_CONTINUE, 4);
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_int_equal(engine_report(e, 1, 4, 0.2, &err), 0);
	done_ok(e, 1, -1, ENG_COMPLETE, 4);

	assert_true(engine_done(e));
	assert_int_equal(engine_next(e, &w, &err), 0);
	engine_counts(e, counts);
	assert_int_equal(counts[TRIAL_COMPLETED], 1);
	assert_int_equal(counts[TRIAL_FAILED], 1);
	engine_trial_view v;
	assert_int_equal(engine_trial(e, 0, &v, &err), 0);
	assert_string_equal(v.reason, "out of retries");
	assert_int_equal(v.n_reports, 2);
	assert_int_equal(engine_best(e, &v, &err), 0);
	assert_int_equal(v.index, 1);
	assert_true(v.value == 0.2 && v.resource == 4);
	engine_free(e);
}

/* Fail one trial's first segment for good with reason. */
static void fail_trial(engine *e, uint64_t trial, const char *reason)
{
	rl_err err;
	engine_decision d;
	assert_int_equal(engine_segment_done(e, trial, 0, -1, &d, &err), 0);
	assert_int_equal(d.outcome, ENG_FAILED);
	assert_int_equal(engine_trial_failed(e, trial, reason, &err), 0);
}

/* trial.fail_fast: K trials failing the same way (numbers aside) before any
 * segment completed stop the experiment; different failures, a success
 * first, fail_fast 0, and failures restored after a restart do not. */
static void test_fail_fast(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MIN, SCHED_NONE, 24, 4);
	sp.trial.fail_fast = 3;
	engine *e;
	rl_err err;
	engine_work w;
	char k1[64], k2[64];
	engine_failure_key("exit code 1: trial 17 diverged at 0.25", k1, sizeof k1);
	engine_failure_key("exit code 1: trial 3 diverged at 12.5", k2, sizeof k2);
	assert_string_equal(k1, "exit code #: trial # diverged at #.#");
	assert_string_equal(k1, k2);

	/* Three the same way: stopped after them, not after 24. */
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(engine_next(e, &w, &err), 1);
	fail_trial(e, 1, "exit code 2: can't open file 'trian.py'");
	fail_trial(e, 0, "exit code 2: can't open file 'trian.py'");
	assert_int_equal(engine_failed_fast(e, NULL, NULL), 0);
	fail_trial(e, 3, "exit code 2: can't open file 'trian.py'");
	uint64_t first;
	int count;
	assert_int_equal(engine_failed_fast(e, &first, &count), 1);
	assert_int_equal(first, 1);
	assert_int_equal(count, 3);
	assert_int_equal(engine_next(e, &w, &err), 0); /* nothing more */
	assert_false(engine_done(e));                  /* trial 2 still runs */
	fail_trial(e, 2, "exit code 2: can't open file 'trian.py'");
	assert_true(engine_done(e));
	assert_int_equal(engine_n_trials(e), 4);
	engine_free(e);

	/* Different failures are not one cause: it goes on. */
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(engine_next(e, &w, &err), 1);
	fail_trial(e, 0, "exit code 1: ValueError: a");
	fail_trial(e, 1, "exit code 1: KeyError: b");
	fail_trial(e, 2, "exit code 1: ValueError: a");
	assert_int_equal(engine_failed_fast(e, NULL, NULL), 0);
	assert_int_equal(engine_next(e, &w, &err), 1);
	engine_free(e);

	/* A completed segment first disarms it for good. */
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(engine_next(e, &w, &err), 1);
	assert_int_equal(engine_report(e, 0, 1, 0.5, &err), 0);
	done_ok(e, 0, -1, ENG_COMPLETE, 1);
	for (uint64_t i = 1; i < 4; i++)
		fail_trial(e, i, "exit code 1: boom");
	assert_int_equal(engine_failed_fast(e, NULL, NULL), 0);
	assert_int_equal(engine_next(e, &w, &err), 1);
	engine_free(e);

	/* fail_fast 0: never. */
	sp.trial.fail_fast = 0;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(engine_next(e, &w, &err), 1);
	for (uint64_t i = 0; i < 4; i++)
		fail_trial(e, i, "exit code 1: boom");
	assert_int_equal(engine_failed_fast(e, NULL, NULL), 0);
	assert_int_equal(engine_next(e, &w, &err), 1);
	engine_free(e);

	/* After a restart the stored failures do not count (the user fixed
	 * something): three new ones are needed. */
	sp.trial.fail_fast = 3;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	rl_value vals[2] = {{.type = VAL_FLOAT, .f = 0.5}, {.type = VAL_FLOAT, .f = 0.5}};
	config cfg = {.n = 2, .v = vals};
	for (uint64_t i = 0; i < 3; i++) {
		engine_trial_record rec = {.index = i, .cfg = &cfg, .state = TRIAL_FAILED,
					   .reason = "exit code 1: boom"};
		assert_int_equal(engine_restore_trial(e, &rec, &err), 0);
	}
	assert_int_equal(engine_failed_fast(e, NULL, NULL), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(engine_next(e, &w, &err), 1);
	fail_trial(e, 3, "exit code 1: boom");
	fail_trial(e, 4, "exit code 1: boom");
	assert_int_equal(engine_failed_fast(e, NULL, NULL), 0);
	fail_trial(e, 5, "exit code 1: boom");
	assert_int_equal(engine_failed_fast(e, &first, NULL), 1);
	assert_int_equal(first, 3);
	engine_free(e);
}

/* Completed trials win over better values at lower resources; before any
 * completes, the furthest trained win. */
static void test_best_prefers_completed(void **state)
{
	(void)state;
	spec sp = make_spec(MODE_MAX, SCHED_NONE, 3, 0);
	sp.schedule.max = 4;
	sp.schedule.segment = 2;
	engine *e;
	rl_err err;
	engine_work w;
	engine_trial_view v;
	assert_int_equal(engine_new(&sp, &e, &err), 0);
	assert_int_equal(engine_best(e, &v, &err), RL_ENOTFOUND);
	for (int i = 0; i < 3; i++) { /* max_concurrent 0: no limit */
		assert_int_equal(engine_next(e, &w, &err), 1);
		assert_int_equal(w.trial, (uint64_t)i);
	}
	assert_int_equal(engine_next(e, &w, &err), 0);
	assert_int_equal(engine_running(e), 3);
	assert_int_equal(engine_report(e, 0, 2, 0.9, &err), 0);
	done_ok(e, 0, 2, ENG_CONTINUE, 4);
	assert_int_equal(engine_report(e, 1, 2, 0.7, &err), 0);
	done_ok(e, 1, 2, ENG_CONTINUE, 4);
	assert_int_equal(engine_report(e, 2, 2, NAN, &err), 0);
	done_ok(e, 2, 2, ENG_CONTINUE, 4);
	assert_int_equal(engine_best(e, &v, &err), 0);
	assert_int_equal(v.index, 0); /* mode max: 0.9 is best at resource 2 */
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_int_equal(w.trial, 0); /* continuations: same resource, lower index */
	assert_int_equal(engine_next(e, &w, &err), 1);
	assert_int_equal(w.trial, 1);
	assert_int_equal(engine_report(e, 1, 4, 0.8, &err), 0);
	done_ok(e, 1, 4, ENG_COMPLETE, 4);
	assert_int_equal(engine_best(e, &v, &err), 0);
	assert_int_equal(v.index, 1); /* completed at 0.8 beats 0.9 at resource 2 */
	assert_int_equal(engine_report(e, 0, 4, 0.85, &err), 0);
	done_ok(e, 0, 4, ENG_COMPLETE, 4);
	assert_int_equal(engine_best(e, &v, &err), 0);
	assert_int_equal(v.index, 0);
	engine_free(e);
}

/*
 * Two objectives (loss min, cost = y min) and a constraint (mem = x <= 0.5):
 * early stopping decides on the first objective alone, so ASHA takes the
 * decisions it takes with that objective alone; the front is the completed
 * feasible trials no other dominates (checked by brute force), never an
 * infeasible one; the best trial is feasible; and an engine restored from
 * the trials' records keeps the same front.
 */
static void test_several_objectives(void **state)
{
	(void)state;
	spec one = make_spec(MODE_MIN, SCHED_ASHA, 40, 4);
	spec two = make_spec(MODE_MIN, SCHED_ASHA, 40, 4);
	spec_objective more[1] = {{"cost", MODE_MIN}};
	spec_constraint cons[1] = {{"mem", -INFINITY, 0.5}};
	two.n_more_objectives = 1;
	two.more_objectives = more;
	two.n_constraints = 1;
	two.constraints = cons;
	sim *a = sim_new(&one), *b = sim_new(&two);
	assert_int_equal(engine_n_side(a->e), 0);
	assert_int_equal(engine_n_side(b->e), 2);
	assert_string_equal(engine_side_metric(b->e, 0), "cost");
	assert_string_equal(engine_side_metric(b->e, 1), "mem");
	sim_run(a, 10000);
	sim_run(b, 10000);
	assert_true(engine_done(b->e));
	assert_int_equal(a->n_log, b->n_log);
	size_t stops = 0;
	for (size_t i = 0; i < a->n_log; i++) {
		assert_int_equal(a->log[i].trial, b->log[i].trial);
		assert_true(a->log[i].to == b->log[i].to);
		assert_int_equal(a->log[i].oc, b->log[i].oc);
		stops += b->log[i].oc == ENG_STOP;
	}
	assert_true(stops > 0);
	engine_trial_view best;
	rl_err err;
	assert_int_equal(engine_best(b->e, &best, &err), 0);
	assert_true(best.feasible);
	/* With one objective the front is the best completed trial. */
	engine_trial_view best1;
	assert_int_equal(engine_best(a->e, &best1, &err), 0);
	uint64_t one_front[MAX_TRIALS];
	assert_int_equal(engine_front(a->e, one_front, MAX_TRIALS), 1);
	assert_int_equal(one_front[0], best1.index);
	sim_free(a);
	sim_free(b);

	/* The front by brute force, every trial completed (no stopping). */
	spec all = two;
	all.schedule.algorithm = SCHED_NONE;
	all.schedule.max = 3;
	b = sim_new(&all);
	sim_run(b, 10000);
	assert_true(engine_done(b->e));
	uint64_t n = engine_n_trials(b->e), want[MAX_TRIALS];
	size_t n_want = 0, infeasible_done = 0;
	for (uint64_t i = 0; i < n; i++) {
		engine_trial_view v, w;
		assert_int_equal(engine_trial(b->e, i, &v, &err), 0);
		if (v.state != TRIAL_COMPLETED)
			continue;
		assert_non_null(v.objectives);
		assert_true(v.objectives[0] == v.value);
		assert_true(v.objectives[1] == value_as_double(&v.cfg->v[1]));
		double x = value_as_double(&v.cfg->v[0]);
		assert_int_equal(v.feasible, x <= 0.5);
		assert_float_equal(v.violation, x > 0.5 ? x - 0.5 : 0, 1e-15);
		if (!v.feasible) {
			infeasible_done++;
			continue;
		}
		int dominated = 0;
		for (uint64_t j = 0; j < n && !dominated; j++) {
			assert_int_equal(engine_trial(b->e, j, &w, &err), 0);
			if (j == i || w.state != TRIAL_COMPLETED || !w.feasible)
				continue;
			dominated = w.objectives[0] <= v.objectives[0] && w.objectives[1] <= v.objectives[1] &&
				    (w.objectives[0] < v.objectives[0] || w.objectives[1] < v.objectives[1]);
		}
		if (!dominated)
			want[n_want++] = i;
	}
	uint64_t got[MAX_TRIALS];
	long nf = engine_front(b->e, got, MAX_TRIALS);
	print_message("several objectives: front of %ld, %zu completed infeasible\n", nf, infeasible_done);
	assert_int_equal(nf, (long)n_want);
	assert_true(n_want >= 1);
	assert_true(infeasible_done >= 1); /* the test has teeth: some were left out */
	for (size_t i = 0; i < n_want; i++)
		assert_int_equal(got[i], want[i]);
	assert_int_equal(engine_best(b->e, &best, &err), 0);
	assert_true(best.feasible);

	/* Restored from records (the side values at the last boundary), the
	 * front is the same. */
	engine *r;
	assert_int_equal(engine_new(&all, &r, &err), 0);
	for (uint64_t i = 0; i < n; i++) {
		engine_trial_view v;
		assert_int_equal(engine_trial(b->e, i, &v, &err), 0);
		double side[2] = {side_value("cost", v.cfg), side_value("mem", v.cfg)};
		engine_trial_record rec = {
			.index = i, .cfg = v.cfg, .state = v.state, .n_reports = v.n_reports,
			.reports = v.reports, .n_boundaries = v.n_boundaries, .boundaries = v.boundaries,
			.side = side,
		};
		assert_int_equal(engine_restore_trial(r, &rec, &err), 0);
	}
	uint64_t again[MAX_TRIALS];
	assert_int_equal(engine_front(r, again, MAX_TRIALS), nf);
	for (long i = 0; i < nf; i++)
		assert_int_equal(again[i], got[i]);
	engine_free(r);
	sim_free(b);
}

static void test_bad_spec(void **state)
{
	(void)state;
	engine *e = NULL;
	rl_err err;
	spec sp = make_spec(MODE_MIN, SCHED_ASHA, 0, 1);
	assert_int_equal(engine_new(&sp, &e, &err), RL_ESPEC);
	assert_string_equal(err.msg, "exp.yaml: search.max_trials: expected a positive integer, got 0");
	sp = make_spec(MODE_MIN, SCHED_ASHA, 5, -2);
	assert_int_equal(engine_new(&sp, &e, &err), RL_ESPEC);
	assert_string_equal(err.msg,
			    "exp.yaml: search.max_concurrent: expected an integer >= 0, got -2");
	sp = make_spec(MODE_MIN, SCHED_ASHA, 5, 1);
	sp.schedule.reduction_factor = 0.5;
	assert_int_equal(engine_new(&sp, &e, &err), RL_ESPEC);
	assert_non_null(strstr(err.msg, "schedule.reduction_factor"));
	assert_null(e);
	engine_free(NULL);
	trial_state st;
	assert_int_equal(engine_state_from_name("stopped", &st, &err), 0);
	assert_int_equal(st, TRIAL_STOPPED);
	assert_string_equal(engine_state_name(TRIAL_PAUSED), "paused");
	assert_int_equal(engine_state_from_name("zombie", &st, &err), RL_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asha_experiment),
		cmocka_unit_test(test_mode_max_mirrors_min),
		cmocka_unit_test(test_other_stoppers),
		cmocka_unit_test(test_restore_equivalence),
		cmocka_unit_test(test_restore_equivalence_tpe),
		cmocka_unit_test(test_pending_reaches_tpe),
		cmocka_unit_test(test_restore_errors),
		cmocka_unit_test(test_end_already_reported),
		cmocka_unit_test(test_adopt),
		cmocka_unit_test(test_failures_and_retries),
		cmocka_unit_test(test_fail_fast),
		cmocka_unit_test(test_best_prefers_completed),
		cmocka_unit_test(test_bad_spec),
		cmocka_unit_test(test_several_objectives),
		cmocka_unit_test(test_next_started),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
