/*
 * waterfill.h - shares of a bounded memory among users: what the scheduling
 * core keeps of the shapes it learnt (src/sched/learnt.c) and what the
 * store keeps of the profiles (src/store/store_profile.c), so that one
 * user's thousands of new shapes forget its own oldest, not another's few,
 * in memory and across a restart alike.
 */
#ifndef RELISH_WATERFILL_H
#define RELISH_WATERFILL_H

#include <stddef.h>

/*
 * shares[i] = min(counts[i], q) for the largest level q with
 * sum(min(counts[i], q)) <= want: a user with fewer than an equal split
 * keeps all its own, and what it leaves is split among the others (the
 * rounding may leave a few of want over).  counts is left as it is;
 * shares (n entries) is also the scratch.
 */
void rl_waterfill(const size_t *counts, size_t n, size_t want, size_t *shares);

#endif
