/*
 * test_api_routes.c - the API's route table: docs/api.md has one heading
 * per row and no other (both ways), matching captures {name}s and tells
 * 404 from 405, access is decided from the row before any handler runs,
 * and errors are the JSON document with the status of their err.h code.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/route.h"

static char *read_doc(void)
{
	const char *src = getenv("RELISH_SRC");
	char path[4096];
	snprintf(path, sizeof path, "%s/docs/api.md", src ? src : ".");
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static void test_docs_match_table(void **state)
{
	(void)state;
	char *doc = read_doc();
	/* every row is documented */
	for (size_t i = 0; i < api_n_routes; i++) {
		char h[300];
		snprintf(h, sizeof h, "\n### %s %s\n", api_routes[i].method, api_routes[i].pattern);
		if (!strstr(doc, h))
			fail_msg("docs/api.md has no heading \"### %s %s\"", api_routes[i].method,
				 api_routes[i].pattern);
	}
	/* every route heading is a row */
	size_t headings = 0;
	for (char *p = strstr(doc, "\n### "); p; p = strstr(p + 1, "\n### ")) {
		char method[16], pattern[256];
		if (sscanf(p + 5, "%15s %255s", method, pattern) != 2 || pattern[0] != '/')
			continue; /* "### Errors" and other prose headings */
		headings++;
		int found = 0;
		for (size_t i = 0; i < api_n_routes; i++)
			found |= !strcmp(api_routes[i].method, method) &&
				 !strcmp(api_routes[i].pattern, pattern);
		if (!found)
			fail_msg("docs/api.md documents %s %s, which is no route", method, pattern);
	}
	assert_int_equal(headings, api_n_routes);
}

static void test_match(void **state)
{
	(void)state;
	const api_route *r = NULL;
	api_req rq;
	rl_err err;
	memset(&rq, 0, sizeof rq);
	assert_int_equal(api_route_match("POST", "/api/v1/experiments/12/cancel", &r, &rq, &err), 0);
	assert_ptr_equal(r->fn, api_h_cancel);
	assert_int_equal(rq.n_param, 1);
	assert_string_equal(rq.param[0], "12");

	memset(&rq, 0, sizeof rq);
	assert_int_equal(api_route_match("GET", "/api/v1/experiments/digits/", &r, &rq, &err), 0);
	assert_ptr_equal(r->fn, api_h_experiment);
	assert_string_equal(rq.param[0], "digits");

	assert_int_equal(api_route_match("GET", "/api/v1/experiments", &r, &rq, &err), 0);
	assert_ptr_equal(r->fn, api_h_experiments);
	assert_int_equal(api_route_match("POST", "/api/v1/experiments", &r, &rq, &err), 0);
	assert_ptr_equal(r->fn, api_h_submit);

	/* the path exists with POST only: 405, and the message says so */
	assert_int_equal(api_route_match("GET", "/api/v1/experiments/3/cancel", &r, &rq, &err),
			 RL_EMETHOD);
	assert_non_null(strstr(err.msg, "POST"));
	assert_int_equal(rl_err_http_status(RL_EMETHOD), 405);
	/* no such path: 404 */
	assert_int_equal(api_route_match("GET", "/api/v1/nothing", &r, &rq, &err), RL_ENOTFOUND);
	assert_int_equal(api_route_match("GET", "/api/v1/experiments/3/x/y", &r, &rq, &err),
			 RL_ENOTFOUND);
	/* an empty segment is no {id} */
	assert_int_equal(api_route_match("GET", "/api/v1/trials//metrics", &r, &rq, &err),
			 RL_ENOTFOUND);
}

static void test_access(void **state)
{
	(void)state;
	api_policy pol = {0};
	api_ctx ctx = {.pol = &pol};
	api_user anon = {.via = API_VIA_NONE}, alice = {.via = API_VIA_TOKEN, .uid = 1001};
	api_req rq = {.ctx = &ctx, .pol = &pol, .user = &anon, .method = "GET", .path = "/x"};
	const api_route *read = NULL, *submit = NULL, *server = NULL;
	api_req tmp;
	rl_err err;
	assert_int_equal(api_route_match("GET", "/api/v1/experiments", &read, &tmp, &err), 0);
	assert_int_equal(api_route_match("POST", "/api/v1/experiments", &submit, &tmp, &err), 0);
	assert_int_equal(api_route_match("GET", "/api/v1/server", &server, &tmp, &err), 0);
	/* no tokens: anonymous reads, never submits */
	assert_int_equal(api_route_allowed(read, &rq, 0, &err), 0);
	assert_int_equal(api_route_allowed(submit, &rq, 0, &err), RL_EAUTH);
	/* tokens on: anonymous only on public routes */
	assert_int_equal(api_route_allowed(read, &rq, 1, &err), RL_EAUTH);
	assert_non_null(strstr(err.msg, "Bearer"));
	assert_int_equal(api_route_allowed(server, &rq, 1, &err), 0);
	/* read: own: anonymous may not read */
	pol.read_own = 1;
	assert_int_equal(api_route_allowed(read, &rq, 0, &err), RL_EAUTH);
	rq.user = &alice;
	assert_int_equal(api_route_allowed(submit, &rq, 1, &err), 0);
	assert_int_equal(rl_err_http_status(RL_EAUTH), 401);
	assert_int_equal(rl_err_http_status(RL_EPERM), 403);
	assert_int_equal(rl_err_http_status(RL_ETOOBIG), 413);
}

static void test_change_rule(void **state)
{
	(void)state;
	api_policy pol = {.have_admin_gid = 1};
	snprintf(pol.admin_group, sizeof pol.admin_group, "hpo-admins");
	api_ctx ctx = {.pol = &pol};
	api_user bob = {.via = API_VIA_UNIX, .uid = 1002}, root = {.via = API_VIA_UNIX, .root = 1};
	snprintf(bob.name, sizeof bob.name, "bob");
	store_experiment e = {.id = 7, .name = (char *)"digits", .owner = (char *)"alice",
			      .owner_uid = 1001};
	api_req rq = {.ctx = &ctx, .pol = &pol, .user = &bob};
	rl_err err;
	assert_int_equal(api_may_change(&rq, &e, &err), RL_EPERM);
	assert_non_null(strstr(err.msg, "belongs to alice"));
	assert_non_null(strstr(err.msg, "hpo-admins"));
	rq.user = &root;
	assert_int_equal(api_may_change(&rq, &e, &err), 0);
	bob.uid = 1001; /* the owner */
	rq.user = &bob;
	assert_int_equal(api_may_change(&rq, &e, &err), 0);
	bob.uid = 1002;
	bob.admin = 1;
	assert_int_equal(api_may_change(&rq, &e, &err), 0);
}

static void test_error_document(void **state)
{
	(void)state;
	api_resp rs;
	memset(&rs, 0, sizeof rs);
	api_resp_error(&rs, RL_ESPEC, "x.yaml:3:5: name: expected a string");
	assert_int_equal(rs.status, 400);
	json_t *e = json_object_get(rs.json, "error");
	assert_string_equal(json_string_value(json_object_get(e, "code")), "RL_ESPEC");
	assert_int_equal(json_integer_value(json_object_get(e, "status")), 400);
	assert_string_equal(json_string_value(json_object_get(e, "message")),
			    "x.yaml:3:5: name: expected a string");
	api_resp_fini(&rs);
	assert_int_equal(rl_err_from_name("RL_EPERM"), RL_EPERM);
	assert_int_equal(rl_err_from_name("RL_ENOPE"), RL_EINTERNAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_docs_match_table), cmocka_unit_test(test_match),
		cmocka_unit_test(test_access),           cmocka_unit_test(test_change_rule),
		cmocka_unit_test(test_error_document),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
