/*
 * handlers.c - what every handler shares: finding the experiment a path
 * names, the read and change rules (docs/api.md "Users and access"), and
 * query parameters.
 */
#include "api/route.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

int api_may_read(const api_req *rq, const store_experiment *e, rl_err *err)
{
	const api_user *u = rq->user;
	if (!rq->pol->read_own || u->root || u->admin)
		return 0;
	if (u->via == API_VIA_NONE)
		return rl_err_set(err, RL_EAUTH, "this service shows each user their own experiments; "
				  "say who you are (unix socket or token)");
	if (e->owner && e->owner_uid == (int64_t)u->uid)
		return 0;
	return rl_err_set(err, RL_EPERM,
			  "experiment %lld belongs to %s; this service shows each user their own "
			  "experiments only (read: own)",
			  (long long)e->id, e->owner ? e->owner : "nobody known");
}

int api_may_change(const api_req *rq, const store_experiment *e, rl_err *err)
{
	const api_user *u = rq->user;
	if (u->via == API_VIA_NONE)
		return rl_err_set(err, RL_EAUTH, "changing an experiment needs to know who you are");
	if (u->root || u->admin)
		return 0;
	if (e->owner && e->owner_uid == (int64_t)u->uid)
		return 0;
	const api_policy *p = rq->pol;
	char admins[120] = "";
	if (p->have_admin_gid)
		snprintf(admins, sizeof admins, " or members of group %s", p->admin_group);
	return rl_err_set(err, RL_EPERM,
			  "experiment %lld (%s) belongs to %s, not to %s: only its owner, root%s "
			  "may change it",
			  (long long)e->id, e->name, e->owner ? e->owner : "nobody known", u->name,
			  admins);
}

int api_find_experiment(api_req *rq, const char *ref, store_experiment *e, rl_err *err)
{
	store_experiment x;
	int rc;
	const api_user *u = rq->user;
	/* Under read: own a user is told nothing of others' experiments, not
	 * even that one exists: another's is "not found", as a missing one
	 * (a 403 naming its owner told ids and owners apart). */
	int own_only = rq->pol->read_own && !u->root && !u->admin && u->via != API_VIA_NONE;
	if (all_digits(ref)) {
		errno = 0;
		long long id = strtoll(ref, NULL, 10);
		if (errno)
			return rl_err_set(err, RL_ENOTFOUND, "no experiment %s", ref);
		rc = store_experiment_get(rq->st, id, &x, err);
		if (rc == 0 && own_only && !(x.owner && x.owner_uid == (int64_t)u->uid)) {
			store_experiment_fini(&x);
			rc = RL_ENOTFOUND;
		}
		if (rc == RL_ENOTFOUND)
			rl_err_set(err, rc, "no experiment with id %lld", id);
	} else {
		/* Names are per owner: the caller's own, else the only one so
		 * named; ?owner=NAME picks another user's. */
		const char *owner = rq->query ? rq->query(rq->qctx, "owner") : NULL;
		if (own_only && owner && *owner && strcmp(owner, u->name) != 0)
			return rl_err_set(err, RL_ENOTFOUND, "%s has no experiment named '%s'", owner,
					  ref);
		rc = store_experiment_find(rq->st, ref, own_only ? u->name : owner && *owner ? owner : NULL,
					   u->via != API_VIA_NONE ? (int64_t)u->uid : -1, &x, err);
		if (rc == RL_ENOTFOUND && own_only)
			rl_err_set(err, rc, "no experiment named '%s'", ref);
	}
	if (rc < 0)
		return rc;
	if ((rc = api_may_read(rq, &x, err)) < 0) {
		store_experiment_fini(&x);
		return rc;
	}
	*e = x;
	return 0;
}

int api_query_real(const api_req *rq, const char *key, double dflt, double *out, rl_err *err)
{
	const char *v = rq->query ? rq->query(rq->qctx, key) : NULL;
	if (!v || !*v) {
		*out = dflt;
		return 0;
	}
	char *end;
	errno = 0;
	double d = strtod(v, &end);
	if (errno || *end || isnan(d))
		return rl_err_set(err, RL_EINVAL, "?%s=: expected a number, got '%s'", key, v);
	*out = d;
	return 0;
}

int api_query_int(const api_req *rq, const char *key, long long dflt, long long *out,
		  rl_err *err)
{
	const char *v = rq->query ? rq->query(rq->qctx, key) : NULL;
	if (!v || !*v) {
		*out = dflt;
		return 0;
	}
	char *end;
	errno = 0;
	long long d = strtoll(v, &end, 10);
	if (errno || *end || d < 0)
		return rl_err_set(err, RL_EINVAL, "?%s=: expected a non-negative integer, got '%s'",
				  key, v);
	*out = d;
	return 0;
}
