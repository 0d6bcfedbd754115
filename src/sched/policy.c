/*
 * policy.c - the scheduling vocabulary's tables and lookups (policy.h):
 * every name, preset and default order comes from the lists there, and
 * sched_policy_options turns a named policy into the core's options.
 */
#include "sched/sched_int.h"

#include <string.h>

const char *const sched_policy_names[SCHED_POLICY__COUNT] = {
#define X(id, name, placement, order, what) [SCHED_POLICY_##id] = name,
	SCHED_POLICY_MAP(X)
#undef X
};

const char *const sched_order_names[ORDER__COUNT] = {
#define X(id, name, what) [ORDER_##id] = name,
	SCHED_ORDER_MAP(X)
#undef X
};

const char *const sched_foreign_names[SCHED_FOREIGN__COUNT] = {
#define X(id, name, what) [SCHED_FOREIGN_##id] = name,
	SCHED_FOREIGN_MAP(X)
#undef X
};

static const sched_policy_info policies[SCHED_POLICY__COUNT] = {
#define X(id, nm, pl, ord, wh) [SCHED_POLICY_##id] = {.name = nm, .placement = pl, .order = ord, .what = wh},
	SCHED_POLICY_MAP(X)
#undef X
};

/* Index of s in names[0..n), or -1. */
static int name_index(const char *const *names, int n, const char *s)
{
	for (int i = 0; s && i < n; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

const sched_policy_info *sched_policy_get(sched_policy p)
{
	return (unsigned)p < SCHED_POLICY__COUNT ? &policies[p] : NULL;
}

const char *sched_policy_name(sched_policy p)
{
	return (unsigned)p < SCHED_POLICY__COUNT ? sched_policy_names[p] : "?";
}

int sched_policy_from_name(const char *s, sched_policy *out)
{
	int i = name_index(sched_policy_names, SCHED_POLICY__COUNT, s);
	if (i < 0)
		return RL_EINVAL;
	*out = (sched_policy)i;
	return 0;
}

sharing_policy sched_policy_placement(sched_policy p)
{
	return (unsigned)p < SCHED_POLICY__COUNT ? policies[p].placement : SHARE_EXCLUSIVE;
}

queue_order sched_policy_order(sched_policy p, queue_order forced)
{
	if (forced != ORDER_DEFAULT || (unsigned)p >= SCHED_POLICY__COUNT)
		return forced;
	return policies[p].order;
}

const char *sched_policy_list(void)
{
	/* ", a, b, c": the first separator skipped */
	static const char list[] =
#define X(id, name, placement, order, what) ", " name
		SCHED_POLICY_MAP(X)
#undef X
		;
	return list + 2;
}

void sched_policy_options(sched_policy p, sched_options *o)
{
	sched_options_default(o, sched_policy_placement(p));
	o->order = sched_policy_order(p, ORDER_DEFAULT);
}

const char *sched_order_name(queue_order o)
{
	return (unsigned)o < ORDER__COUNT ? sched_order_names[o] : "?";
}

int sched_order_from_name(const char *s, queue_order *out)
{
	int i = name_index(sched_order_names, ORDER__COUNT, s);
	if (i < 0)
		return RL_EINVAL;
	*out = (queue_order)i;
	return 0;
}

const char *sched_foreign_policy_name(sched_foreign_policy p)
{
	return (unsigned)p < SCHED_FOREIGN__COUNT ? sched_foreign_names[p] : "unknown";
}

int sched_foreign_policy_from_name(const char *s, sched_foreign_policy *out)
{
	int i = name_index(sched_foreign_names, SCHED_FOREIGN__COUNT, s);
	if (i < 0)
		return RL_EINVAL;
	*out = (sched_foreign_policy)i;
	return 0;
}
