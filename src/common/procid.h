/*
 * procid.h - naming a process for good: its pid together with its start
 * time (field 22 of /proc/PID/stat, clock ticks after boot).  A pid alone is
 * not enough: the kernel reuses pids, so after a restart (or a long wait) a
 * recorded pid may belong to an unrelated process.  pid + start time does
 * not repeat.
 *
 * One check, strict, used by every caller that is about to signal or adopt
 * a recorded process (recovery, the executors' reclaim and sweep):
 * procid_matches says yes only when the start time was read when the
 * process was recorded, is read again now, and the two agree.  A start time
 * that could not be read (0) never means "any process".
 *
 * Linux only (/proc).  Nothing here keeps state.
 */
#ifndef RELISH_PROCID_H
#define RELISH_PROCID_H

#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* What one /proc/PID/stat line says (the fields relish uses). */
typedef struct procid_stat {
	pid_t pid;
	char state;            /* R, S, D, Z, T, ... */
	pid_t ppid;
	pid_t pgid;
	pid_t sid;             /* session */
	uint64_t start_time;   /* field 22: clock ticks after boot */
	uint64_t rss_pages;    /* field 24 */
} procid_stat;

/* Parse the text of a /proc/PID/stat file (the command name may hold spaces
 * and parentheses).  Returns 0, or RL_EPARSE when the text is not one. */
int procid_parse_stat(const char *text, procid_stat *out, rl_err *err);

/* Read and parse /proc/PID/stat.  RL_EINVAL for pid <= 0, RL_ENOTFOUND when
 * no such process, RL_EIO or RL_EPARSE when it cannot be read. */
int procid_read_stat(pid_t pid, procid_stat *out, rl_err *err);

/* Start time of pid (> 0 on Linux for every process but the first).
 * Errors as procid_read_stat's; *out is written only on success. */
int procid_start_time(pid_t pid, uint64_t *out, rl_err *err);

/* 1 when pid is the process recorded with start_time: pid > 0, start_time
 * != 0, the process exists, is not a zombie, and started then.  0 in every
 * other case (gone, reused, unreadable, never identified). */
int procid_matches(pid_t pid, uint64_t start_time);

/*
 * Signal the process group that leader (recorded with start_time) leads,
 * but only while that id can still be the group relish started: 0 when
 * sent (or nothing was left to receive it), -1 when refused.  Refused when
 * another process now has the leader's pid (a reaped leader's pid reused:
 * the group of that id is someone else's) or the start time was never
 * read.  Sent when the leader is still that process (a zombie too), and
 * when no process has its pid: Linux gives a pid again only once no
 * process, group or session holds it, so a group that still has that id
 * is what is left of the leader's.  (Between the check and the kill the
 * last member may exit and the id be given again: a window of
 * microseconds, against the seconds to days a stale pid waits today.)
 */
int procid_kill_group(pid_t leader, uint64_t start_time, int sig);

#endif
