/*
 * readonly.c - `relish serve --read-only --db FILE`: the API and the
 * dashboard over a database that nothing runs, such as the one a
 * `relish run` left (docs/dashboard.md).  No driver, no devices owned, no
 * state folder: the store is opened read-only (STORE_READONLY, so a
 * database on read-only media, or one a `relish run` still writes, is
 * fine) and the API's handlers see api_ctx.d == NULL: reads answer from
 * the store, submit and cancel are refused (403).  Listens on loopback
 * TCP (127.0.0.1:8765 unless --listen says otherwise) with the config's
 * access rules, if one is given; stops on SIGTERM or SIGINT.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "serve/serve.h"
#include "store/store.h"

typedef struct ro_service {
	uv_loop_t loop;
	uv_signal_t sig_term, sig_int;
	store *st;
	serve_config cfg;
	api_policy pol;
	api_ctx ctx;
	api_server *api;
} ro_service;

static void ro_signal(uv_signal_t *h, int signum)
{
	ro_service *s = h->data;
	serve_log("info", "serve.signal", "signal=%s", signum == SIGTERM ? "TERM" : "INT");
	api_server_close(s->api);
	s->api = NULL;
	uv_close((uv_handle_t *)&s->sig_term, NULL);
	uv_close((uv_handle_t *)&s->sig_int, NULL);
}

int serve_run_readonly(const serve_options *o, rl_err *err)
{
	ro_service *s = calloc(1, sizeof *s);
	if (!s)
		return rl_err_set(err, RL_ENOMEM, "relish serve --read-only");
	int rc = 0, loop_ok = 0;
	serve_config_default(&s->cfg);
	if (o->log_file && (rc = serve_log_open(o->log_file, err)) < 0)
		goto out;
	if (o->config_path && (rc = serve_config_load(o->config_path, &s->cfg, err)) < 0)
		goto out;
	s->pol = s->cfg.api;
	if ((rc = store_open(o->db_path, STORE_READONLY | STORE_MUST_EXIST, &s->st, err)) < 0)
		goto out;
	if (uv_loop_init(&s->loop) != 0) {
		rc = rl_err_set(err, RL_EIO, "starting the event loop");
		goto out;
	}
	loop_ok = 1;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->ctx = (api_ctx){.d = NULL, .st = s->st, .db_path = o->db_path, .pol = &s->pol,
			   .started_at = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9,
			   .state_dir = o->db_path};
	api_options ao;
	api_options_default(&ao);
	for (size_t i = 0; i < o->n_listen && i < API_MAX_LISTEN; i++)
		ao.listen[ao.n_listen++] = o->listen[i];
	if (ao.n_listen == 0)
		ao.listen[ao.n_listen++] = SERVE_READONLY_LISTEN;
	ao.tokens_path = s->cfg.tokens;
	ao.log = serve_log_cb;
	ao.log_reads = o->log_reads;
	if ((rc = api_server_start(&s->loop, &s->ctx, &ao, &s->api, err)) < 0)
		goto out;
	uv_signal_init(&s->loop, &s->sig_term);
	uv_signal_init(&s->loop, &s->sig_int);
	s->sig_term.data = s->sig_int.data = s;
	uv_signal_start(&s->sig_term, ro_signal, SIGTERM);
	uv_signal_start(&s->sig_int, ro_signal, SIGINT);
	for (size_t i = 0; api_server_address(s->api, i); i++) {
		const char *a = api_server_address(s->api, i);
		if (strncmp(a, "unix:", 5) != 0)
			serve_log("info", "serve.dashboard", "url=http://%s/ db=%s", a, o->db_path);
	}
	serve_log("info", "serve.started", "pid=%d db=%s read_only=1", (int)getpid(), o->db_path);
	uv_run(&s->loop, UV_RUN_DEFAULT);
	serve_log("info", "serve.stopped", "rc=0");
out:
	if (s->api)
		api_server_close(s->api);
	if (loop_ok) {
		uv_run(&s->loop, UV_RUN_DEFAULT); /* close callbacks */
		uv_loop_close(&s->loop);
	}
	store_close(s->st);
	serve_config_fini(&s->cfg);
	free(s);
	return rc;
}
