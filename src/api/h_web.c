/*
 * h_web.c - the dashboard's routes: GET / (the page) and GET /ui/{file}
 * (its modules, styles and uPlot), all from the files embedded in the
 * binary at build time (web/web.h).  The page holds no data: it asks the
 * API for everything with the caller's own identity, so these routes are
 * public.  A build without the dashboard answers / with a short page that
 * says how to build it, and /ui/ files with 404.
 */
#include "api/route.h"

#include <stdlib.h>
#include <string.h>

#include "web/web.h"

static const char no_dashboard[] =
	"<!doctype html><meta charset=utf-8><title>relish</title>"
	"<body style=\"font-family:sans-serif;max-width:40em;margin:3em auto\">"
	"<h1>relish</h1><p>This relish was built without its web dashboard "
	"(RELISH_WEB=OFF, or npm was missing at build time). Build it with "
	"<code>scripts/deps.sh web</code> then <code>scripts/build.sh release</code> "
	"(docs/dashboard.md). The API answers under <a href=\"/api/v1/server\">/api/v1/</a>.</p>";

static int send_asset(api_resp *rs, const web_asset *a, rl_err *err)
{
	rs->text = malloc(a->len + 1);
	if (!rs->text)
		return rl_err_set(err, RL_ENOMEM, "sending %s", a->path);
	memcpy(rs->text, a->data, a->len + 1);
	rs->text_len = a->len;
	rs->content_type = a->content_type;
	/* Every file is the binary's own: nothing is fetched from elsewhere. */
	api_resp_header(rs, "Content-Security-Policy",
			"default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:");
	api_resp_header(rs, "X-Content-Type-Options", "nosniff");
	return 0;
}

int api_h_page(api_req *rq, api_resp *rs, rl_err *err)
{
	(void)rq;
	const web_asset *a = web_asset_find("index.html");
	if (a)
		return send_asset(rs, a, err);
	rs->text = strdup(no_dashboard);
	if (!rs->text)
		return rl_err_set(err, RL_ENOMEM, "the page");
	rs->text_len = strlen(no_dashboard);
	rs->content_type = "text/html; charset=utf-8";
	return 0;
}

int api_h_asset(api_req *rq, api_resp *rs, rl_err *err)
{
	const web_asset *a = web_asset_find(rq->param[0]);
	if (!a)
		return rl_err_set(err, RL_ENOTFOUND, "no dashboard file %s%s", rq->param[0],
				  web_n_assets ? "" : " (this relish was built without the dashboard)");
	return send_asset(rs, a, err);
}
