/*
 * usage.c - what the fair order ranks users by: their usage, the
 * device-seconds their segments held, each second weighted by
 * 2^(-age / half-life) (sched_options.fair_half_life_s), so that a user's
 * big study of last month no longer holds them back this month.  Slurm's
 * fair-share decays an association's usage the same way
 * (PriorityDecayHalfLife, 7 days by default), as do the queues of KAI
 * Scheduler and Kueue; the live driver and the simulator both go through
 * here, so simulated and live orders agree.
 *
 * The rule is exact and O(1) per event: between two events a user holds a
 * constant number of devices n, and the usage at t + dt of a usage U at t
 * is U 2^(-dt/H) + n H / ln 2 (1 - 2^(-dt/H)) (the integral of the weight
 * over the interval).  Each user keeps U as of the last event (use_s at
 * use_t) and brings it forward when what it runs changes; a read at any
 * later now applies the same formula without writing.  Decaying at fixed
 * intervals instead (Slurm recomputes every PriorityCalcPeriod) would make
 * the order depend on when the last recomputation happened.
 *
 * Without a half-life (<= 0) the usage is the raw attained service
 * (sched.c's closed_s and run_dev arithmetic), unchanged from before decay
 * existed.  The per-job service of las and tiresias never decays: it ranks
 * a job's segments against each other within the job's own short life.
 */
#include "sched/sched_int.h"

#include <math.h>

static int decays(const sched *s)
{
	return s->opt.fair_half_life_s > 0 && isfinite(s->opt.fair_half_life_s);
}

/* 2^(-dt/H), 1 for dt <= 0 (a read before the last event: nothing decays). */
static double keep(const sched *s, double dt)
{
	return dt > 0 ? exp2(-dt / s->opt.fair_half_life_s) : 1.0;
}

/* The usage a user's records say it has at t (t >= use_t gives the exact
 * value; an earlier t the value at use_t). */
static double usage_at(const sched *s, const sched_user *u, double t)
{
	if (!u->use_set)
		return 0;
	double k = keep(s, t - u->use_t);
	double h = s->opt.fair_half_life_s / M_LN2;
	return u->use_s * k + u->run_dev * h * (1.0 - k);
}

double user_usage(const sched *s, const sched_user *u, double now)
{
	if (!decays(s))
		return user_attained(u, now);
	return usage_at(s, u, now);
}

/* Bring the user's record forward to t (never back). */
static void usage_advance(const sched *s, sched_user *u, double t)
{
	if (!u->use_set) {
		u->use_set = 1;
		u->use_t = t;
		return;
	}
	if (t <= u->use_t)
		return;
	u->use_s = usage_at(s, u, t);
	u->use_t = t;
}

/* Add n devices held over [a, b] with b <= use_t (after usage_advance):
 * their weight as seen from use_t. */
static void usage_add_past(const sched *s, sched_user *u, double n, double a, double b)
{
	if (b <= a)
		return;
	double h = s->opt.fair_half_life_s / M_LN2;
	u->use_s += n * h * (keep(s, u->use_t - b) - keep(s, u->use_t - a));
}

void usage_start(const sched *s, sched_user *u, double n, double start, double now)
{
	if (!decays(s))
		return;
	usage_advance(s, u, now > start ? now : start);
	/* an adopted segment ran before the core knew it */
	if (start < u->use_t)
		usage_add_past(s, u, n, start, u->use_t);
}

void usage_end(const sched *s, sched_user *u, double now)
{
	if (decays(s))
		usage_advance(s, u, now);
}

double sched_usage_of(double n_dev, double start, double end, double now, double half_life_s)
{
	if (!(end > start))
		return 0;
	if (!(half_life_s > 0) || !isfinite(half_life_s))
		return n_dev * (end - start);
	double h = half_life_s / M_LN2;
	double kb = now > end ? exp2(-(now - end) / half_life_s) : 1.0;
	double ka = now > start ? exp2(-(now - start) / half_life_s) : 1.0;
	return n_dev * h * (kb - ka);
}

int sched_user_add_service(sched *s, uint32_t user, double start, double end, double n_dev)
{
	if (!isfinite(start) || !isfinite(end) || !(end >= start) || !(n_dev > 0) ||
	    !isfinite(n_dev))
		return RL_EINVAL;
	size_t i = user_ensure(s, user);
	if (i == SCHED_NONE)
		return RL_ENOMEM;
	sched_user *u = &s->user[i];
	u->closed_s += n_dev * (end - start);
	if (decays(s)) {
		usage_advance(s, u, end);
		usage_add_past(s, u, n_dev, start, end);
	}
	return 0;
}
