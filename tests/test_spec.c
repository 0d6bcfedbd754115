/*
 * test_spec.c - the spec parser on valid input: a spec that sets every key,
 * written once in YAML and once in JSON, must give the same structure field
 * by field; a minimal spec must get the documented defaults; sizes,
 * durations, grid sizes and placeholder expansion have worked examples; and
 * truncated, deep or hostile input must fail cleanly, never crash.
 * Malformed specs and their messages are in test_spec_cases.c.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "spec/spec.h"

static const char full_yaml[] =
	"# every key set, none to its default\n"
	"name: full-example.v2\n"
	"objective: {metric: val_loss, mode: min}\n"
	"search:\n"
	"  algorithm: random\n"
	"  seed: 7\n"
	"  max_trials: 50\n"
	"  max_concurrent: 3\n"
	"  n_startup: 4\n"
	"  space:\n"
	"    lr: {type: loguniform, low: 1.0e-4, high: 0.1, grid_points: 4}\n"
	"    momentum: {type: uniform, low: 0, high: 0.9, step: 0.1}\n"
	"    units: {type: int, low: 16, high: 512, log: true}\n"
	"    layers: {type: int, low: 1, high: 8, step: 2}\n"
	"    act: {type: choice, values: [relu, tanh, \"1\", 2, 2.5, true]}\n"
	"    epochs: {type: fixed, value: 12}\n"
	"    tag: baseline\n"
	"schedule:\n"
	"  algorithm: median\n"
	"  resource: step\n"
	"  min: 2\n"
	"  max: 12\n"
	"  reduction_factor: 2\n"
	"  segment: 2\n"
	"  grace: 3\n"
	"trial:\n"
	"  command: [python3, train.py, --lr, \"{lr}\", \"--units={units}\", \"{{literal}}\", --epochs, 12]\n"
	"  env:\n"
	"    A: x\n"
	"    B: \"{act}-{trial_id}\"\n"
	"  workdir: sub/dir\n"
	"  executor: podman\n"
	"  image: docker.io/library/python:3.11\n"
	"  network: host\n"
	"  mode: warm\n"
	"  resources:\n"
	"    memory: 2GiB\n"
	"    gpu_memory: 1.5G\n"
	"    cpus: 2\n"
	"    gpus: 0.5\n"
	"  timeout: 1h30m\n"
	"  retries: 2\n"
	"  shape_params: [units, layers]\n"
	"sharing:\n"
	"  policy: pack\n"
	"  memory_margin: 0.3\n";

static const char full_json[] =
	"{\n"
	"  \"name\": \"full-example.v2\",\n"
	"  \"objective\": {\"metric\": \"val_loss\", \"mode\": \"min\"},\n"
	"  \"search\": {\n"
	"    \"algorithm\": \"random\", \"seed\": 7, \"max_trials\": 50, \"max_concurrent\": 3, \"n_startup\": 4,\n"
	"    \"space\": {\n"
	"      \"lr\": {\"type\": \"loguniform\", \"low\": 1.0e-4, \"high\": 0.1, \"grid_points\": 4},\n"
	"      \"momentum\": {\"type\": \"uniform\", \"low\": 0, \"high\": 0.9, \"step\": 0.1},\n"
	"      \"units\": {\"type\": \"int\", \"low\": 16, \"high\": 512, \"log\": true},\n"
	"      \"layers\": {\"type\": \"int\", \"low\": 1, \"high\": 8, \"step\": 2},\n"
	"      \"act\": {\"type\": \"choice\", \"values\": [\"relu\", \"tanh\", \"1\", 2, 2.5, true]},\n"
	"      \"epochs\": {\"type\": \"fixed\", \"value\": 12},\n"
	"      \"tag\": \"baseline\"\n"
	"    }\n"
	"  },\n"
	"  \"schedule\": {\"algorithm\": \"median\", \"resource\": \"step\", \"min\": 2, \"max\": 12,\n"
	"               \"reduction_factor\": 2, \"segment\": 2, \"grace\": 3},\n"
	"  \"trial\": {\n"
	"    \"command\": [\"python3\", \"train.py\", \"--lr\", \"{lr}\", \"--units={units}\", \"{{literal}}\",\n"
	"                \"--epochs\", 12],\n"
	"    \"env\": {\"A\": \"x\", \"B\": \"{act}-{trial_id}\"},\n"
	"    \"workdir\": \"sub/dir\", \"executor\": \"podman\", \"image\": \"docker.io/library/python:3.11\",\n"
	"    \"network\": \"host\", \"mode\": \"warm\",\n"
	"    \"resources\": {\"memory\": \"2GiB\", \"gpu_memory\": \"1.5G\", \"cpus\": 2, \"gpus\": 0.5},\n"
	"    \"timeout\": \"1h30m\", \"retries\": 2, \"shape_params\": [\"units\", \"layers\"]\n"
	"  },\n"
	"  \"sharing\": {\"policy\": \"pack\", \"memory_margin\": 0.3}\n"
	"}\n";

static spec *parse_ok(const char *text, const char *name, int json)
{
	spec *s = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = spec_parse_text(text, strlen(text), name, json, &s, &err);
	if (rc < 0)
		print_error("unexpected error: %s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_non_null(s);
	return s;
}

static void check_full(const spec *s, const char *source)
{
	char cwd[4096], wd[4200];
	assert_non_null(getcwd(cwd, sizeof cwd));
	snprintf(wd, sizeof wd, "%s/sub/dir", cwd);

	assert_string_equal(s->name, "full-example.v2");
	assert_string_equal(s->source, source);
	assert_string_equal(s->objective.metric, "val_loss");
	assert_int_equal(s->objective.mode, MODE_MIN);

	assert_int_equal(s->search.algorithm, SEARCH_RANDOM);
	assert_int_equal(s->search.seed, 7);
	assert_int_equal(s->search.max_trials, 50);
	assert_int_equal(s->search.max_concurrent, 3);
	assert_int_equal(s->search.n_startup, 4);

	const space *sp = &s->search.space;
	assert_int_equal(sp->n, 7);
	const param_def *p = &sp->params[0];
	assert_string_equal(p->name, "lr");
	assert_int_equal(p->kind, PARAM_LOGUNIFORM);
	assert_true(p->low == 1.0e-4 && p->high == 0.1);
	assert_int_equal(p->grid_points, 4);
	p = &sp->params[1];
	assert_string_equal(p->name, "momentum");
	assert_int_equal(p->kind, PARAM_UNIFORM);
	assert_true(p->low == 0 && p->high == 0.9 && p->step == 0.1);
	assert_int_equal(p->grid_points, 10); /* 0, 0.1, ..., 0.9 */
	p = &sp->params[2];
	assert_string_equal(p->name, "units");
	assert_int_equal(p->kind, PARAM_INT);
	assert_true(p->low == 16 && p->high == 512 && p->log == 1 && p->step == 0);
	assert_int_equal(p->grid_points, 5); /* 497 values: too many to enumerate */
	p = &sp->params[3];
	assert_string_equal(p->name, "layers");
	assert_true(p->kind == PARAM_INT && p->low == 1 && p->high == 8 && p->step == 2 && !p->log);
	assert_int_equal(p->grid_points, 4); /* 1, 3, 5, 7 */
	p = &sp->params[4];
	assert_string_equal(p->name, "act");
	assert_int_equal(p->kind, PARAM_CHOICE);
	assert_int_equal(p->n_choices, 6);
	assert_int_equal(p->choices[0].type, VAL_STR);
	assert_string_equal(p->choices[0].str, "relu");
	assert_string_equal(p->choices[1].str, "tanh");
	assert_int_equal(p->choices[2].type, VAL_STR); /* quoted "1" stays a string */
	assert_string_equal(p->choices[2].str, "1");
	assert_int_equal(p->choices[3].type, VAL_INT);
	assert_int_equal(p->choices[3].i, 2);
	assert_int_equal(p->choices[4].type, VAL_FLOAT);
	assert_true(p->choices[4].f == 2.5);
	assert_int_equal(p->choices[5].type, VAL_BOOL);
	assert_int_equal(p->choices[5].i, 1);
	assert_int_equal(p->grid_points, 6);
	p = &sp->params[5];
	assert_string_equal(p->name, "epochs");
	assert_int_equal(p->kind, PARAM_FIXED);
	assert_int_equal(p->fixed.type, VAL_INT);
	assert_int_equal(p->fixed.i, 12);
	p = &sp->params[6];
	assert_string_equal(p->name, "tag");
	assert_int_equal(p->kind, PARAM_FIXED);
	assert_int_equal(p->fixed.type, VAL_STR);
	assert_string_equal(p->fixed.str, "baseline");
	/* 4 * 10 * 5 * 4 * 6 * 1 * 1 */
	assert_int_equal(spec_grid_size(sp), 4800);

	assert_int_equal(s->schedule.algorithm, SCHED_MEDIAN);
	assert_string_equal(s->schedule.resource, "step");
	assert_true(s->schedule.min == 2 && s->schedule.max == 12);
	assert_true(s->schedule.reduction_factor == 2 && s->schedule.segment == 2);
	assert_int_equal(s->schedule.grace, 3);

	const char *argv[] = {"python3", "train.py", "--lr", "{lr}", "--units={units}", "{{literal}}", "--epochs", "12"};
	assert_int_equal(s->trial.argc, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(s->trial.argv[i], argv[i]);
	assert_null(s->trial.argv[8]);
	assert_int_equal(s->trial.n_env, 2);
	assert_string_equal(s->trial.env[0].name, "A");
	assert_string_equal(s->trial.env[0].value, "x");
	assert_string_equal(s->trial.env[1].name, "B");
	assert_string_equal(s->trial.env[1].value, "{act}-{trial_id}");
	assert_string_equal(s->trial.workdir, wd);
	assert_int_equal(s->trial.executor, EXEC_PODMAN);
	assert_string_equal(s->trial.image, "docker.io/library/python:3.11");
	assert_string_equal(s->trial.network, "host");
	assert_int_equal(s->trial.mode, TRIAL_MODE_WARM);
	assert_int_equal(s->trial.resources.memory_mib, 2048);
	assert_int_equal(s->trial.resources.gpu_memory_mib, 1536);
	assert_true(s->trial.resources.cpus == 2 && s->trial.resources.gpus == 0.5);
	assert_true(s->trial.timeout_s == 5400);
	assert_int_equal(s->trial.retries, 2);
	assert_int_equal(s->trial.n_shape_params, 2);
	assert_string_equal(s->trial.shape_params[0], "units");
	assert_string_equal(s->trial.shape_params[1], "layers");

	assert_int_equal(s->sharing.policy, SHARE_PACK);
	assert_true(s->sharing.memory_margin == 0.3);
}

static void test_full_yaml(void **state)
{
	(void)state;
	spec *s = parse_ok(full_yaml, "full.yaml", 0);
	check_full(s, "full.yaml");
	spec_free(s);
}

static void test_full_json(void **state)
{
	(void)state;
	spec *s = parse_ok(full_json, "full.json", 1);
	check_full(s, "full.json");
	spec_free(s);
}

/* The normalised JSON of both forms is the same text (bar the source). */
static void test_json_output_matches(void **state)
{
	(void)state;
	spec *a = parse_ok(full_yaml, "same", 0), *b = parse_ok(full_json, "same", 1);
	char *ja = spec_to_json(a), *jb = spec_to_json(b);
	assert_non_null(ja);
	assert_string_equal(ja, jb);
	assert_non_null(strstr(ja, "\"grid_size\": 4800"));
	assert_non_null(strstr(ja, "\"memory_mib\": 2048"));
	free(ja);
	free(jb);
	spec_free(a);
	spec_free(b);
}

static const char minimal[] = "name: m\n"
			      "objective: {metric: acc, mode: max}\n"
			      "search: {space: {x: {type: uniform, low: -1, high: 1}}}\n"
			      "trial: {command: [./run, \"{x}\"]}\n";

static void test_defaults(void **state)
{
	(void)state;
	char cwd[4096];
	assert_non_null(getcwd(cwd, sizeof cwd));
	spec *s = parse_ok(minimal, "m.yaml", 0);
	assert_int_equal(s->search.algorithm, SEARCH_TPE);
	assert_int_equal(s->search.seed, 0);
	assert_int_equal(s->search.max_trials, 20);
	assert_int_equal(s->search.max_concurrent, 0);
	assert_int_equal(s->search.n_startup, 10);
	assert_int_equal(s->schedule.algorithm, SCHED_NONE);
	assert_string_equal(s->schedule.resource, "epoch");
	assert_true(s->schedule.min == 1 && s->schedule.max == 1 && s->schedule.reduction_factor == 3);
	assert_true(s->schedule.segment == 0);
	assert_int_equal(s->schedule.grace, 5);
	assert_int_equal(s->trial.executor, EXEC_PROCESS);
	assert_int_equal(s->trial.mode, TRIAL_MODE_ONESHOT);
	assert_null(s->trial.image);
	assert_string_equal(s->trial.network, "none");
	assert_string_equal(s->trial.workdir, cwd);
	assert_int_equal(s->trial.n_env, 0);
	assert_null(s->trial.shape_params);
	assert_true(s->trial.resources.cpus == 1 && s->trial.resources.gpus == 0);
	assert_int_equal(s->trial.resources.memory_mib, 0);
	assert_int_equal(s->trial.resources.gpu_memory_mib, 0);
	assert_true(s->trial.timeout_s == 0);
	assert_int_equal(s->trial.retries, 0);
	assert_int_equal(s->sharing.policy, SHARE_RELISH);
	assert_true(s->sharing.memory_margin == 0.2);
	assert_int_equal(s->search.space.params[0].grid_points, 5);
	spec_free(s);
}

static spec *with_trial_line(const char *line)
{
	char text[2048];
	snprintf(text, sizeof text, "%s  %s\n", minimal, line);
	/* minimal's trial is a flow map; rewrite it in block form. */
	snprintf(text, sizeof text,
		 "name: m\nobjective: {metric: acc, mode: max}\n"
		 "search: {space: {x: {type: uniform, low: -1, high: 1}}}\n"
		 "trial:\n  command: [./run]\n  %s\n",
		 line);
	return parse_ok(text, "t.yaml", 0);
}

static void test_memory_units(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		uint64_t mib;
	} rows[] = {
		{"4GiB", 4096}, {"512MiB", 512}, {"2G", 2048}, {"1024", 1024}, {"1.5GiB", 1536},
		{"1GB", 954}, /* 1e9 bytes, rounded up */
		{"100KiB", 1}, {"0", 0}, {"\"3 Gi\"", 3072}, {"1TiB", 1048576}, {"2m", 2}, {"2.5", 3},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char line[64];
		snprintf(line, sizeof line, "resources: {memory: %s}", rows[i].text);
		spec *s = with_trial_line(line);
		if (s->trial.resources.memory_mib != rows[i].mib)
			print_error("%s\n", rows[i].text);
		assert_int_equal(s->trial.resources.memory_mib, rows[i].mib);
		spec_free(s);
	}
}

static void test_durations(void **state)
{
	(void)state;
	static const struct {
		const char *text;
		double s;
	} rows[] = {
		{"90", 90}, {"2.5", 2.5}, {"30s", 30}, {"5m", 300}, {"2h", 7200}, {"1h30m", 5400},
		{"250ms", 0.25}, {"1d", 86400}, {"\"45\"", 45},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char line[64];
		snprintf(line, sizeof line, "timeout: %s", rows[i].text);
		spec *s = with_trial_line(line);
		assert_true(s->trial.timeout_s == rows[i].s);
		spec_free(s);
	}
}

/* Grid search without max_trials runs the whole grid. */
static void test_grid_default_budget(void **state)
{
	(void)state;
	const char *text = "name: g\nobjective: {metric: acc, mode: max}\n"
			   "search:\n  algorithm: grid\n  space:\n"
			   "    a: [x, y, z]\n"                               /* 3 */
			   "    b: {type: int, low: 1, high: 4}\n"            /* 4 */
			   "    c: {type: uniform, low: 0, high: 1}\n"        /* 5 (default) */
			   "    d: {type: uniform, low: 0, high: 1, step: 0.25}\n" /* 5 */
			   "    e: {type: int, low: 1, high: 1000}\n"         /* 5: too many */
			   "    f: {type: loguniform, low: 0.001, high: 1, grid_points: 3}\n" /* 3 */
			   "    g: {type: int, low: 0, high: 10, grid_points: 20}\n" /* 11: capped */
			   "trial: {command: [./run]}\n";
	spec *s = parse_ok(text, "g.yaml", 0);
	static const int points[] = {3, 4, 5, 5, 5, 3, 11};
	for (size_t i = 0; i < 7; i++)
		assert_int_equal(s->search.space.params[i].grid_points, points[i]);
	assert_int_equal(spec_grid_size(&s->search.space), 3 * 4 * 5 * 5 * 5 * 3 * 11);
	assert_int_equal(s->search.max_trials, 3 * 4 * 5 * 5 * 5 * 3 * 11);
	spec_free(s);
}

static void test_expand(void **state)
{
	(void)state;
	spec *s = parse_ok(full_yaml, "full.yaml", 0);
	config c;
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(config_init(&c, s->search.space.n, &err), 0);
	for (size_t i = 0; i < c.n; i++)
		assert_int_equal(space_from_unit(&s->search.space.params[i], 0.0, &c.v[i], &err), 0);
	/* exp(log(1e-4)) is not exactly 1e-4: set lr by hand. */
	value_fini(&c.v[0]);
	c.v[0].type = VAL_FLOAT;
	c.v[0].f = 0.0001;
	spec_builtins b = {.trial_id = "17", .checkpoint_dir = "/ck/17", .resource_from = "2", .resource_to = "4"};
	static const struct {
		const char *tmpl, *out;
	} rows[] = {
		{"{lr}", "0.0001"},
		{"--units={units}", "--units=16"},
		{"{{literal}}", "{literal}"},
		{"a}b", "a}b"},
		{"{act}-{trial_id}", "relu-17"},
		{"{checkpoint_dir}/{resource_from}..{resource_to}", "/ck/17/2..4"},
		{"{tag}{epochs}", "baseline12"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		char *out = NULL;
		assert_int_equal(spec_expand_config(rows[i].tmpl, &s->search.space, &c, &b, &out, &err), 0);
		assert_string_equal(out, rows[i].out);
		free(out);
	}
	char *out = NULL;
	assert_int_equal(spec_expand_config("{nope}", &s->search.space, &c, &b, &out, &err), RL_ESPEC);
	assert_string_equal(err.msg, "unknown placeholder {nope}");
	assert_int_equal(spec_expand_config("x{lr", &s->search.space, &c, &b, &out, &err), RL_ESPEC);
	assert_string_equal(err.msg,
			    "malformed placeholder at character 2: expected {name} (write {{ for a literal brace)");
	assert_null(out);
	config_fini(&c);
	spec_free(s);
}

/* Conditional parameters: when and default parsed into the space,
 * echoed by --json, a default substituted for {name} while inactive,
 * and inactive parameters absent from the parameters' JSON. */
static const char cond_yaml[] =
	"name: cond\n"
	"objective: {metric: acc, mode: max}\n"
	"search:\n"
	"  space:\n"
	"    model: [mlp, cnn, vit]\n"
	"    layers: {type: int, low: 1, high: 4, when: {model: mlp}}\n"
	"    channels: {type: choice, values: [4, 8, 16], when: {model: [cnn, vit]}, default: 0}\n"
	"    kernel: {type: choice, values: [3, 5], when: {channels: 16}}\n"
	"    lr: {type: loguniform, low: 1.0e-4, high: 0.1}\n"
	"trial:\n"
	"  command: [./train, \"--model={model}\", \"--channels={channels}\"]\n";

static void test_conditional(void **state)
{
	(void)state;
	spec *s = parse_ok(cond_yaml, "cond.yaml", 0);
	const space *sp = &s->search.space;
	assert_int_equal(sp->n, 5);
	const param_def *layers = &sp->params[1], *ch = &sp->params[2], *k = &sp->params[3];
	assert_int_equal(layers->n_when, 1);
	assert_int_equal(layers->parent, 0);
	assert_string_equal(layers->when[0].str, "mlp");
	assert_int_equal(layers->dflt.type, VAL_NONE);
	assert_int_equal(ch->n_when, 2);
	assert_string_equal(ch->when[1].str, "vit");
	assert_int_equal(ch->dflt.type, VAL_INT);
	assert_int_equal(ch->dflt.i, 0);
	assert_int_equal(k->parent, 2);
	assert_int_equal(k->when[0].i, 16);
	assert_int_equal(sp->params[4].n_when, 0);

	char *json = spec_to_json(s);
	assert_non_null(strstr(json, "\"when\": {\n          \"model\": [\n            \"cnn\",\n"
				     "            \"vit\"\n          ]\n        },\n        \"default\": 0"));
	free(json);

	/* An MLP trial: channels and kernel inactive; {channels} gives 0. */
	config c;
	assert_int_equal(config_init(&c, 5, NULL), 0);
	c.v[0] = (rl_value){.type = VAL_STR, .str = strdup("mlp")};
	c.v[1] = (rl_value){.type = VAL_INT, .i = 3};
	c.v[4] = (rl_value){.type = VAL_FLOAT, .f = 0.01};
	assert_true(space_active(sp, 1, &c));
	assert_false(space_active(sp, 2, &c));
	assert_false(space_active(sp, 3, &c)); /* its parent is inactive */
	char *out = NULL;
	assert_int_equal(spec_expand_config("{model}/{channels}", sp, &c, NULL, &out, NULL), 0);
	assert_string_equal(out, "mlp/0");
	free(out);
	char *pj = config_to_json(sp, &c);
	assert_string_equal(pj, "{\"model\":\"mlp\",\"layers\":3,\"lr\":0.01}");
	config back;
	assert_int_equal(config_from_json(sp, pj, &back, NULL), 0);
	assert_int_equal(back.v[2].type, VAL_NONE);
	assert_int_equal(back.v[1].i, 3);
	config_fini(&back);
	/* Given though inactive, or missing though active: refused. */
	rl_err err;
	rl_err_clear(&err);
	assert_int_equal(config_from_json(sp, "{\"model\":\"mlp\",\"layers\":3,\"channels\":8,\"lr\":0.01}",
					  &back, &err), RL_EPARSE);
	assert_string_equal(err.msg, "parameters: channels is given but inactive");
	assert_int_equal(config_from_json(sp, "{\"model\":\"cnn\",\"lr\":0.01}", &back, &err), RL_EPARSE);
	assert_string_equal(err.msg, "parameters: missing channels");
	free(pj);
	config_fini(&c);

	/* A copy keeps the conditions. */
	space cp;
	assert_int_equal(space_copy(&cp, sp, NULL), 0);
	assert_int_equal(cp.params[2].n_when, 2);
	assert_string_equal(cp.params[2].when[0].str, "cnn");
	assert_int_equal(cp.params[2].dflt.i, 0);
	space_fini(&cp);
	spec_free(s);
}

static void test_names(void **state)
{
	(void)state;
	sched_policy p = SCHED_POLICY_RELISH;
	assert_int_equal(sched_policy_from_name("exclusive", &p), 0);
	assert_int_equal(p, SCHED_POLICY_EXCLUSIVE);
	assert_int_equal(sched_policy_from_name("pack", &p), 0);
	assert_int_equal(p, SCHED_POLICY_PACK);
	assert_true(sched_policy_from_name("packed", &p) < 0);
	assert_int_equal(p, SCHED_POLICY_PACK); /* untouched on failure */
	assert_string_equal(sched_policy_name(SCHED_POLICY_RELISH), "relish");
	assert_string_equal(spec_mode_name(MODE_MIN), "min");
	assert_string_equal(spec_search_name(SEARCH_SOBOL), "sobol");
	assert_string_equal(spec_schedule_name(SCHED_HYPERBAND), "hyperband");
	assert_string_equal(spec_executor_name(EXEC_DOCKER), "docker");
	assert_string_equal(spec_trial_mode_name(TRIAL_MODE_WORKER), "worker");
	assert_true(spec_is_builtin("checkpoint_dir") && !spec_is_builtin("lr"));
}

/* Valid JSON that libyaml cannot read (a UTF-16 surrogate pair escape) still
 * parses, through jansson's values; messages then lack positions. */
static void test_json_fallback(void **state)
{
	(void)state;
	const char *text = "{\"name\": \"e\", \"objective\": {\"metric\": \"acc\", \"mode\": \"max\"},"
			   "\"search\": {\"space\": {\"s\": [\"\\ud83d\\ude00\", \"b\"]}},"
			   "\"trial\": {\"command\": [\"./run\", \"{s}\"]}}";
	spec *s = parse_ok(text, "f.json", 1);
	assert_string_equal(s->search.space.params[0].choices[0].str, "\xf0\x9f\x98\x80");
	spec_free(s);

	const char *bad = "{\"name\": \"e\", \"objective\": {\"metric\": \"acc\", \"mode\": \"maxx\"},"
			  "\"search\": {\"space\": {\"s\": [\"\\ud83d\\ude00\", \"b\"]}},"
			  "\"trial\": {\"command\": [\"./run\", \"{s}\"]}}";
	rl_err err;
	rl_err_clear(&err);
	spec *t = NULL;
	assert_int_equal(spec_parse_text(bad, strlen(bad), "f.json", 1, &t, &err), RL_ESPEC);
	assert_null(t);
	assert_string_equal(err.msg, "f.json: objective.mode: expected one of max, min, got \"maxx\" (did you mean \"max\"?)");
}

/* search.n_startup: 0 is refused (it used to be taken silently as the
 * default 10); 1 is the least. */
static void test_n_startup_range(void **state)
{
	(void)state;
	const char *bad = "name: e\nobjective: {metric: acc, mode: max}\n"
			  "search: {algorithm: tpe, n_startup: 0, space: {x: {type: uniform, low: 0, high: 1}}}\n"
			  "trial: {command: [./run, \"{x}\"]}\n";
	rl_err err;
	rl_err_clear(&err);
	spec *t = NULL;
	assert_int_equal(spec_parse_text(bad, strlen(bad), "s.yaml", 0, &t, &err), RL_ESPEC);
	assert_null(t);
	assert_non_null(strstr(err.msg, "search.n_startup"));
	assert_non_null(strstr(err.msg, "s.yaml:3:"));
}

/* trial.privileges: parsed into canonical names and "UID:GID"; spec_grants
 * lists what a container spec asks beyond least privilege (nothing for
 * the defaults, nothing for a process spec), and the JSON keeps it. */
static void test_privileges(void **state)
{
	(void)state;
	static const char base[] =
		"name: p\nobjective: {metric: a, mode: max}\n"
		"search: {space: {x: {type: uniform, low: 0, high: 1}}}\n";
	char text[1024];
	snprintf(text, sizeof text, "%strial:\n  command: [t]\n  executor: podman\n  image: img\n", base);
	spec *s = parse_ok(text, "d.yaml", 0);
	spec_grant g[8];
	assert_int_equal(spec_grants(s, g, 8), 0);
	assert_null(s->trial.privileges.user);
	char *json = spec_to_json(s);
	assert_null(strstr(json, "privileges")); /* absent when not given: same identity as before */
	free(json);
	spec_free(s);

	snprintf(text, sizeof text,
		 "%strial:\n  command: [t]\n  executor: docker\n  image: img\n  network: host\n"
		 "  mounts: [\"/usr:/usr:ro\"]\n"
		 "  privileges:\n    capabilities: [cap_net_raw, SYS_ptrace]\n    user: \"1000\"\n"
		 "    writable_root: true\n    new_privileges: true\n", base);
	s = parse_ok(text, "g.yaml", 0);
	const spec_privileges *p = &s->trial.privileges;
	assert_int_equal(p->n_capabilities, 2);
	assert_string_equal(p->capabilities[0], "NET_RAW");
	assert_string_equal(p->capabilities[1], "SYS_PTRACE");
	assert_string_equal(p->user, "1000:1000");
	assert_true(p->writable_root && p->new_privileges);
	size_t n = spec_grants(s, g, 8);
	assert_int_equal(n, 7);
	const char *want[][2] = {
		{"trial.network", "host"},
		{"trial.privileges.capabilities", "NET_RAW"},
		{"trial.privileges.capabilities", "SYS_PTRACE"},
		{"trial.privileges.user", "1000:1000"},
		{"trial.privileges.writable_root", "true"},
		{"trial.privileges.new_privileges", "true"},
		{"trial.mounts", "/usr:/usr:ro"},
	};
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(g[i].key, want[i][0]);
		assert_string_equal(g[i].value, want[i][1]);
	}
	assert_int_equal(spec_grants(s, g, 2), 7); /* the count, even past max */
	json = spec_to_json(s);
	assert_non_null(strstr(json, "\"privileges\""));
	assert_non_null(strstr(json, "\"NET_RAW\""));
	free(json);
	spec_free(s);

	snprintf(text, sizeof text,
		 "%strial:\n  command: [t]\n  executor: podman\n  image: img\n"
		 "  privileges: {user: root}\n", base);
	s = parse_ok(text, "r.yaml", 0);
	assert_string_equal(s->trial.privileges.user, "0:0");
	spec_free(s);

	/* A process spec asks nothing of a container. */
	snprintf(text, sizeof text, "%strial:\n  command: [t]\n  network: host\n", base);
	s = parse_ok(text, "n.yaml", 0);
	assert_int_equal(spec_grants(s, g, 8), 0);
	spec_free(s);
}

/* Never crash: every prefix of the valid specs, hostile structures and
 * pseudo-random bytes must either parse or fail with a message. */
static void try_parse(const char *text, size_t len, int json)
{
	spec *s = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = spec_parse_text(text, len, "fuzz", json, &s, &err);
	if (rc == 0)
		spec_free(s);
	else
		assert_true(err.msg[0] != '\0');
}

static void test_hostile_input(void **state)
{
	(void)state;
	for (size_t n = 0; n <= strlen(full_yaml); n++)
		try_parse(full_yaml, n, 0);
	for (size_t n = 0; n <= strlen(full_json); n++)
		try_parse(full_json, n, 1);

	/* Deep nesting is refused before any recursion could hurt. */
	size_t depth = 5000;
	char *deep = malloc(2 * depth + 1);
	memset(deep, '[', depth);
	memset(deep + depth, ']', depth);
	deep[2 * depth] = '\0';
	rl_err err;
	rl_err_clear(&err);
	spec *s = NULL;
	assert_int_equal(spec_parse_text(deep, 2 * depth, "deep.yaml", 0, &s, &err), RL_EPARSE);
	assert_non_null(strstr(err.msg, "nested too deeply"));
	try_parse(deep, 2 * depth, 1);
	free(deep);

	/* "Billion laughs": aliases multiplying nodes hit the node budget. */
	const char *laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
			     "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
			     "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
			     "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
			     "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
			     "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n";
	assert_int_equal(spec_parse_text(laughs, strlen(laughs), "laughs.yaml", 0, &s, &err), RL_EPARSE);
	assert_non_null(strstr(err.msg, "document too large"));

	/* Aliases within budget are expanded like the anchored node. */
	const char *alias = "name: al\nobjective: {metric: acc, mode: max}\n"
			    "search: {space: {x: &xs [1, 2], y: *xs}}\n"
			    "trial: {command: [./run]}\n";
	s = parse_ok(alias, "alias.yaml", 0);
	assert_int_equal(s->search.space.params[1].n_choices, 2);
	assert_int_equal(s->search.space.params[1].choices[1].i, 2);
	spec_free(s);

	/* Pseudo-random bytes and byte flips of the valid spec. */
	uint64_t x = 88172645463325252ull;
	char buf[512];
	for (int round = 0; round < 300; round++) {
		for (size_t i = 0; i < sizeof buf; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (char)(x & 0xff);
		}
		try_parse(buf, sizeof buf, round & 1);
	}
	char *mut = strdup(full_yaml);
	for (size_t i = 0; i < strlen(full_yaml); i += 3) {
		char keep = mut[i];
		mut[i] = "{}[]:,'\"&*!|>#-\t\n?"[i % 19];
		try_parse(mut, strlen(full_yaml), 0);
		mut[i] = keep;
	}
	free(mut);
}

/* Every key the schema knows appears in docs/spec.md, so the docs cannot
 * fall behind the tables. */
/* objective: as a list, and constraints; the single map stays as it was
 * (its identity JSON unchanged: no list, no constraints key). */
static void test_several_objectives(void **state)
{
	(void)state;
	const char *one = "name: e\nobjective: {metric: acc, mode: max}\n"
			  "search: {space: {x: {type: uniform, low: 0, high: 1}}}\n"
			  "trial: {command: [./run, \"{x}\"]}\n";
	spec *s = parse_ok(one, "one.yaml", 0);
	assert_int_equal(spec_n_objectives(s), 1);
	assert_int_equal(s->n_constraints, 0);
	assert_string_equal(spec_objective_at(s, 0).metric, "acc");
	char *j1 = spec_to_json(s);
	assert_non_null(strstr(j1, "\"objective\": {\n    \"metric\": \"acc\""));
	assert_null(strstr(j1, "constraints"));
	free(j1);
	spec_free(s);

	const char *many = "name: e\n"
			   "objective:\n"
			   "  - {metric: acc, mode: max}\n"
			   "  - {metric: latency_ms, mode: min}\n"
			   "  - {metric: size_mb, mode: min}\n"
			   "constraints:\n"
			   "  - mem_excess\n"
			   "  - {metric: latency_ms, max: 20}\n"
			   "  - {metric: params_m, min: 1, max: 50}\n"
			   "  - {metric: temp, min: -3}\n"
			   "search: {space: {x: {type: uniform, low: 0, high: 1}}}\n"
			   "trial: {command: [./run, \"{x}\"]}\n";
	s = parse_ok(many, "many.yaml", 0);
	assert_int_equal(spec_n_objectives(s), 3);
	assert_string_equal(s->objective.metric, "acc");
	assert_int_equal(s->objective.mode, MODE_MAX);
	assert_string_equal(spec_objective_at(s, 1).metric, "latency_ms");
	assert_int_equal(spec_objective_at(s, 1).mode, MODE_MIN);
	assert_string_equal(spec_objective_at(s, 2).metric, "size_mb");
	assert_int_equal(s->search.multivariate, 0); /* several: univariate by default */
	assert_int_equal(s->n_constraints, 4);
	assert_string_equal(s->constraints[0].metric, "mem_excess");
	assert_true(isinf(s->constraints[0].lo) && s->constraints[0].lo < 0);
	assert_true(s->constraints[0].hi == 0);
	assert_true(s->constraints[1].hi == 20 && isinf(s->constraints[1].lo));
	assert_true(s->constraints[2].lo == 1 && s->constraints[2].hi == 50);
	assert_true(s->constraints[3].lo == -3 && isinf(s->constraints[3].hi) && s->constraints[3].hi > 0);
	/* The violation: the distance to the nearer bound outside, NaN never feasible. */
	assert_true(spec_constraint_violation(&s->constraints[0], -1) == 0);
	assert_true(spec_constraint_violation(&s->constraints[0], 0.5) == 0.5);
	assert_true(spec_constraint_violation(&s->constraints[2], 0.25) == 0.75);
	assert_true(spec_constraint_violation(&s->constraints[2], 60) == 10);
	assert_true(spec_constraint_violation(&s->constraints[2], 7) == 0);
	assert_true(isinf(spec_constraint_violation(&s->constraints[1], NAN)));

	/* Round trip: the spec JSON reads back as the same spec. */
	char *sj = spec_to_spec_json(s);
	assert_non_null(sj);
	spec *back = parse_ok(sj, "back.json", 1);
	assert_int_equal(spec_n_objectives(back), 3);
	assert_string_equal(spec_objective_at(back, 2).metric, "size_mb");
	assert_int_equal(spec_objective_at(back, 2).mode, MODE_MIN);
	assert_int_equal(back->n_constraints, 4);
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(back->constraints[i].metric, s->constraints[i].metric);
		assert_true(back->constraints[i].lo == s->constraints[i].lo);
		assert_true(back->constraints[i].hi == s->constraints[i].hi);
	}
	char *a = spec_to_json(s), *b = spec_to_json(back);
	assert_non_null(strstr(a, "\"objective\": [\n"));
	free(a);
	free(b);
	free(sj);
	spec_free(back);
	spec_free(s);

	/* A one-item list is one objective. */
	const char *single = "name: e\nobjective: [{metric: acc, mode: min}]\n"
			     "search: {space: {x: {type: uniform, low: 0, high: 1}}}\n"
			     "trial: {command: [./run, \"{x}\"]}\n";
	s = parse_ok(single, "single.yaml", 0);
	assert_int_equal(spec_n_objectives(s), 1);
	assert_int_equal(s->objective.mode, MODE_MIN);
	assert_int_equal(s->search.multivariate, 1);
	spec_free(s);
}

static void note_key(const char *path, const char *help, void *ctx)
{
	const char *doc = ctx;
	char quoted[160];
	snprintf(quoted, sizeof quoted, "`%s`", path);
	if (!strstr(doc, quoted))
		print_error("docs/spec.md does not document %s (%s)\n", quoted, help);
	assert_non_null(strstr(doc, quoted));
	assert_true(help && help[0]);
}

static void test_docs_cover_schema(void **state)
{
	(void)state;
	const char *src = getenv("RELISH_SRC");
	assert_non_null(src);
	char path[4096];
	snprintf(path, sizeof path, "%s/docs/spec.md", src);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	static char doc[1 << 17];
	size_t n = fread(doc, 1, sizeof doc - 1, f);
	fclose(f);
	doc[n] = '\0';
	spec_schema_foreach(note_key, doc);
}

/* trial.image takes plain references only (spec_image.c): every form a
 * registry or an engine's local store names, and none of the transports
 * through which a root engine would read a file the submitter chose. */
static void test_image_references(void **state)
{
	(void)state;
	static const char *const good[] = {
		"busybox", "busybox:latest", "localhost/relish-host", "localhost/relish-host:latest",
		"docker.io/library/python:3.11-slim", "ghcr.io/org/team/trainer:v1.2_rc-3",
		"localhost:5000/x/y:z", "registry.example.com:443/a__b/c.d/e--f:T_1",
		"quay.io/x/y@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
		"x:tag@sha256:0123456789abcdef0123456789abcdef",
		"0123456789ab", /* an image id, which podman resolves in its store */
	};
	static const char *const bad[] = {
		"", "-privileged", "--privileged",
		"docker-archive:/tmp/evil.tar", "docker-archive:evil.tar", "oci-archive:/x.tar",
		"oci:/srv/layout:tag", "dir:/root", "containers-storage:[overlay@/x]img",
		"docker://busybox", "docker-daemon:busybox:latest", "tarball:/x.tar", "sif:/x.sif",
		"ostree:x@/repo", "docker:latest", "Busybox", "a//b", "a/", "/a", "a:", "a:b:c",
		"a:-tag", "a@sha256:12", "a@sha256:zz23456789abcdef0123456789abcdef", "a@:0123",
		"a..b", "a-", "-a", "a/b c", "a\nb", "host:port/x", "my_host.com/x", "a/b:c/d",
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++)
		if (spec_image_problem(good[i]))
			fail_msg("%s refused: %s", good[i], spec_image_problem(good[i]));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (!spec_image_problem(bad[i]))
			fail_msg("%s accepted", bad[i]);
	char longref[300];
	memset(longref, 'a', sizeof longref - 1);
	longref[sizeof longref - 1] = 0;
	assert_non_null(spec_image_problem(longref));
	assert_non_null(spec_image_problem(NULL));
	/* and the spec says so, with the path and what was expected */
	const char *yaml = "name: t\nobjective: {metric: m, mode: max}\n"
			   "search: {algorithm: random, max_trials: 1,\n"
			   "         space: {x: {type: uniform, low: 0, high: 1}}}\n"
			   "trial:\n  command: [a]\n  executor: podman\n"
			   "  image: docker-archive:/root/secret.tar\n";
	spec *sp = NULL;
	rl_err err = {0};
	assert_int_equal(spec_parse_text(yaml, strlen(yaml), "t.yaml", 0, &sp, &err), RL_ESPEC);
	assert_null(sp);
	assert_non_null(strstr(err.msg, "t.yaml:8:10: trial.image: expected an image reference"));
	assert_non_null(strstr(err.msg, "not a transport"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_yaml),
		cmocka_unit_test(test_full_json),
		cmocka_unit_test(test_json_output_matches),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_memory_units),
		cmocka_unit_test(test_durations),
		cmocka_unit_test(test_grid_default_budget),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_conditional),
		cmocka_unit_test(test_json_fallback),
		cmocka_unit_test(test_n_startup_range),
		cmocka_unit_test(test_privileges),
		cmocka_unit_test(test_hostile_input),
		cmocka_unit_test(test_docs_cover_schema),
		cmocka_unit_test(test_several_objectives),
		cmocka_unit_test(test_image_references),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
