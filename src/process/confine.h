/*
 * confine.h - every process of a segment ends with it (exec-internal; the
 * process executor's, see process.c; docs/trials.md, "Descendants").
 *
 * A trial may fork: DataLoader workers, a launcher, a shell pipeline, a
 * daemon that calls setsid() to leave its parent's session and process
 * group.  Process groups catch the first kinds and not the last, so each
 * trial process (the leader and all it starts) is confined to a unit that
 * its descendants cannot leave by themselves, chosen once per executor:
 *
 *   cgroup2   a cgroup v2 per trial process, under relish's own cgroup:
 *             <v2 mount><own path>/relish.<pid>.<start time>.<k>/p<N>.  All of
 *             it is killed at once (cgroup.kill; else every member, until
 *             none is left).  Needs a writable cgroup v2 hierarchy (root,
 *             or a delegated subtree); the hybrid layout's unified mount
 *             (/sys/fs/cgroup/unified) serves, no controller is needed.
 *   cgroup1   the same in the cgroup v1 freezer hierarchy: frozen, every
 *             member SIGKILLed, thawed, so a fork cannot race the kill.
 *   proc      fallback when no cgroup is writable (an unprivileged
 *             container): the process group plus every process whose
 *             parent chain reaches a known member, found in /proc at each
 *             memory sample (sample_interval_s) and remembered by pid and
 *             start time, so a setsid child stays known after its parent
 *             exits.  Gap: a descendant that detaches and is orphaned
 *             between two samples (both within 0.2 s) is not seen.
 *   group     the process group alone (what the container executor's
 *             attach processes get: their containers are confined by the
 *             engine, and conmon must outlive `podman run`).
 *
 * The trial is started in its cgroup (v2: clone3's CLONE_INTO_CGROUP on
 * the folder confine_unit_begin opened) or joins it itself before exec
 * (its child writes "0" to the join file opened there; spawn.h), so it is
 * in it from its program's first instruction and relish never enters a
 * trial's cgroup:
 * no limit or accounting of a unit ever applies to relish's own threads.
 * A child that cannot join (the hierarchy changed since confine_new) runs
 * tracked through /proc instead.
 *
 * Memory: a unit's memory is the summed RSS of its live members (zombies
 * hold none), read from /proc: the same measure as before confinement,
 * now over every descendant.
 *
 * After a crash: units of a relish that is no longer running (its pid and
 * start time, in the directory's name, name no live process) are killed
 * and removed when the next executor starts (confine_new), so the strays
 * of a killed relish do not outlive it either.
 *
 * Everything here runs on the loop thread; nothing blocks for long (the
 * v1 freeze is waited for at most 100 ms).
 */
#ifndef RELISH_PROCESS_CONFINE_H
#define RELISH_PROCESS_CONFINE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/err.h"
#include "exec/exec.h"

typedef struct confine confine;
typedef struct confine_unit confine_unit;

/*
 * Choose how to confine (want AUTO: cgroup2, cgroup1, proc, the first that
 * works; RELISH_CONFINE=cgroup2|cgroup1|proc|group in the environment
 * chooses instead) and sweep units left by relish processes that are gone.
 * An explicit choice that cannot be used is RL_EUNSUPPORTED, naming why.
 * *out is freed with confine_free.
 */
int confine_new(exec_confine want, confine **out, rl_err *err);
/* Kills what is left of every unit and removes their cgroups.  NULL ok. */
void confine_free(confine *c);

/*
 * CPU limits (relish serve): from now on a unit begun with cpus > 0 gets a
 * CFS quota of cpus CPUs per 100 ms (at least 1 ms, the kernel's least):
 * cpu.max in its own cgroup v2 folder where the cpu controller is
 * delegated to relish's cgroup (its folder enables it for relish's units;
 * the kernel refuses that while relish's folder holds processes, unless it
 * is the root), else a cgroup of its own in the v1 cpu hierarchy (the
 * hybrid layout), which the child joins beside its unit.  0, or -1 with
 * why (nothing is limited then: the trial's cpus: stays a share in the
 * core and its thread variables).
 */
int confine_cpu_setup(confine *c, char *why, size_t wn);
/* 2: cgroup v2 cpu.max; 1: cgroup v1 cpu quota; 0: no CPU limits. */
int confine_cpu(const confine *c);

exec_confine confine_kind(const confine *c);
/* e.g. "cgroup v2 (/sys/fs/cgroup/unified/relish.12.345.1)"; static or owned by c. */
const char *confine_describe(const confine *c);
/* Units of dead relish processes removed by confine_new. */
size_t confine_swept(const confine *c);

/*
 * Around the spawn of one trial process: confine_unit_begin creates its
 * unit (and cgroup); the child joins it by writing "0" to
 * confine_unit_join_fd (close-on-exec; -1 when the unit has no cgroup);
 * confine_unit_spawned records the leader (pid 0: the spawn failed; the
 * unit is then freed) and closes the join fd; join_errno, the child's
 * failure to join (0: joined), makes the unit fall back to /proc tracking.
 * begin returns 0 or an error (the caller may spawn without a unit: *out
 * is NULL then).
 */
int confine_unit_begin(confine *c, double cpus, confine_unit **out, rl_err *err);
int confine_unit_join_fd(const confine_unit *u);
/* cgroup v1 cpu (confine_cpu 1): the join file of the unit's cgroup in the
 * cpu hierarchy, which the child joins too; -1 otherwise.  Closed by
 * spawned. */
int confine_unit_cpu_join_fd(const confine_unit *u);
/* cgroup v2: the unit's cgroup folder (close-on-exec), for a child started
 * in it (clone3's CLONE_INTO_CGROUP); -1 otherwise.  Closed by spawned. */
int confine_unit_dir_fd(const confine_unit *u);
void confine_unit_spawned(confine *c, confine_unit *u, pid_t leader, uint64_t start_time,
			  int join_errno);

/* proc and group: one /proc scan that updates every unit's members and
 * memory; cgroups read theirs on demand.  Call before confine_unit_usage. */
void confine_scan(confine *c);

/* Summed RSS (bytes) and number of the unit's live members.  0, or -1 when
 * nothing could be read (then nothing is written). */
int confine_unit_usage(confine *c, confine_unit *u, uint64_t *rss, int *members);

/* The pids of the unit's members (at most max): live, from its cgroup, or
 * as of the last confine_scan.  Count, or -1 when not known. */
int confine_unit_members(confine *c, confine_unit *u, pid_t *out, size_t max);

/* Send sig to the leader's process group (the SIGTERM of the stop ladder:
 * what the trial itself asked to receive). */
void confine_unit_signal_group(confine *c, confine_unit *u, int sig);

/* SIGKILL every member, the leader's group included. */
void confine_unit_kill(confine *c, confine_unit *u);

/* Kill what is left and free the unit; its cgroup is removed now or, when
 * its last members are still dying, at a later confine_scan. */
void confine_unit_free(confine *c, confine_unit *u);

#endif
