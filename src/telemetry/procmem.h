/*
 * procmem.h - host memory of process groups, read from /proc.
 *
 * The process executor runs each trial in its own process group; a trial's
 * memory is the sum of the resident set sizes of the group's live members
 * (a PyTorch DataLoader's workers count).  procmem_sample reads /proc once
 * for any number of groups, so sampling every 200 ms costs one directory
 * scan whatever the number of running segments.  Which process a pid is
 * (pid + start time, across a restart) is common/procid.h's.
 */
#ifndef RELISH_PROCMEM_H
#define RELISH_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"

/* The VmHWM line of a /proc/PID/status text, in bytes: 0, or -1 when the
 * text has none (a kernel thread) or it is malformed. */
int procmem_parse_hwm(const char *text, uint64_t *bytes);

/*
 * For each of the n process groups pgids[i], write the total RSS in bytes of
 * its live (non-zombie) members to rss[i], the group leader's VmHWM (the
 * kernel's high-water mark of its RSS; 0 when the leader is gone) to
 * hwm[i], and the members' number to nproc[i] (hwm and nproc may be
 * NULL).  One scan of /proc.  Returns 0 or RL_EIO.
 *
 * Both are lower bounds of the group's peak: samples miss what happens
 * between them, and when the leader was at its high-water mark the group
 * held at least that much.  The mark catches the short spikes of a
 * single-process trial (most are) that a sample misses; a spike in
 * another member (a data-loading worker) is still seen only by samples.
 * Only the leader is read, so that resetting it is one write and not a
 * scan of /proc.
 */
int procmem_sample(const pid_t *pgids, size_t n, uint64_t *rss, uint64_t *hwm, int *nproc,
		   rl_err *err);

/* Process pid's VmHWM (its kernel high-water mark of RSS) in bytes; 0 when
 * it is gone or unreadable. */
uint64_t procmem_hwm(pid_t pid);

/* Reset process pid's high-water mark to its current RSS (writes 5 to
 * /proc/PID/clear_refs), so that VmHWM covers what follows: a process that
 * runs one segment after another.  Returns 0, or RL_EIO (the mark then
 * still covers earlier work, and the caller must not use it). */
int procmem_reset_hwm(pid_t pid, rl_err *err);

/* Number of live (non-zombie) processes in group pgid (0 when none). */
int procmem_group_alive(pid_t pgid);

#endif
