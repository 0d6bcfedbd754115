/*
 * gpu.c - what the live driver measures of running segments on GPUs: every
 * tick it samples NVML once (telemetry_sample) and attributes to each
 * running segment the memory and SM utilisation of its processes (every
 * member of its confinement unit, exec_members: detached descendants
 * too; its process group for executors that do not say), so a trial that
 * forks data-loader workers or a launcher is measured as a whole.  The peak memory feeds the out-of-memory path and
 * the shape's profile; the mean utilisation (the average of the samples
 * that saw the group busy or idle on the device) goes to the core's
 * co-location model (sched_observation.mean_util), the segment row and the
 * profile.  (Whether a segment ran alone or beside others is the core's
 * to know: it placed them.)  And it measures
 * each GPU's foreign use, the memory of processes relish does not own, for
 * the core to place against (foreign_update).
 *
 * Sampling is coarse (LIVE_TICK_MS) on purpose: NVML's per-process
 * utilisation already averages over its own period, and a faster loop would
 * cost the trials more than it tells.
 */
#include <errno.h>
#include <math.h>
#include <unistd.h>

#include "live/live_int.h"

/* Whether pid belongs to one of relish's running segments (its process
 * group is the segment's, or it is a member of the segment's confinement
 * unit: a detached descendant, whose memory is the segment's and must not
 * count as others' too).  -1 when the process has gone since NVML listed
 * it: its memory is free by now, so it counts for nobody. */
static int owned_pid(const live *d, uint32_t pid)
{
	pid_t pg = getpgid((pid_t)pid);
	if (pg < 0)
		return errno == ESRCH ? -1 : 0;
	/* Any segment still linked: one that just ended keeps its group's
	 * stragglers (workers still exiting) as its own until it is gone. */
	for (const live_seg *g = d->segs; g; g = g->next)
		if (g->pid > 0 && g->pid == pg)
			return 1;
	for (const live_seg *g = d->segs; g; g = g->next) {
		pid_t mp[256];
		int nm = g->es ? exec_members(live__exec(g->x), g->es, mp, 256) : -1;
		for (int i = 0; i < nm; i++)
			if (mp[i] == (pid_t)pid)
				return 1;
	}
	return 0;
}

/*
 * Foreign use of each GPU: the memory of every compute process NVML lists
 * there that is not in a running segment's process group, plus memory in
 * use that no listed process accounts for (processes NVML will not name,
 * in another PID namespace or of another user) beyond the least such amount
 * seen since relish started (the driver's own share of a device, which is
 * never free for anyone).  The core counts it with its margin
 * (sched_device_set_foreign) and places against what is left.
 */
static void foreign_update(live *d, const telemetry_snapshot *snap, double now)
{
	for (size_t i = 0; i < d->devs->n && i < LIVE_MAX_DEVICES; i++) {
		const device_entry *de = &d->devs->dev[i];
		if (!de->info.is_gpu || de->nvml_index < 0)
			continue;
		const telemetry_dev_sample *ds = NULL;
		for (size_t k = 0; k < snap->n_dev; k++)
			if (snap->dev[k].index == de->nvml_index)
				ds = &snap->dev[k];
		if (!ds)
			continue;
		uint64_t foreign = 0, listed = 0;
		for (size_t k = 0; k < snap->n_proc; k++) {
			const telemetry_proc_mem *p = &snap->proc[k];
			if (p->device != de->nvml_index || p->used_mib == UINT64_MAX)
				continue;
			listed += p->used_mib;
			if (owned_pid(d, p->pid) == 0)
				foreign += p->used_mib;
		}
		uint64_t unlisted = ds->mem_used_mib > listed ? ds->mem_used_mib - listed : 0;
		if (!d->gpu_base_known[i] || unlisted < d->gpu_base_mib[i]) {
			d->gpu_base_mib[i] = unlisted;
			d->gpu_base_known[i] = 1;
		}
		foreign += unlisted - d->gpu_base_mib[i];
		d->foreign_mib[i] = foreign;
		sched_device_set_foreign(d->core, (int)i, foreign, now);
	}
}

void live__gpu_sample(live *d)
{
	if (!d->tel || !d->n_gpus)
		return;
	telemetry_snapshot snap;
	double now = live__mono(d); /* the core's clock */
	if (telemetry_sample(d->tel, now, &snap, NULL) < 0)
		return;
	if (d->core)
		foreign_update(d, &snap, now);
	for (live_seg *g = d->segs; g; g = g->next) {
		if (!g->es || g->pid <= 0)
			continue;
		const device_entry *de = &d->devs->dev[g->dev];
		if (!de->info.is_gpu)
			continue;
		/* Every process of the segment, where the executor knows them
		 * (detached descendants too); its process group otherwise. */
		pid_t mp[256];
		uint32_t up[256];
		int nm = exec_members(live__exec(g->x), g->es, mp, 256);
		for (int i = 0; i < nm; i++)
			up[i] = (uint32_t)mp[i];
		uint64_t m = nm > 0 ? telemetry_snapshot_mem_for_pids(&snap, de->nvml_index, up, (size_t)nm)
				    : telemetry_snapshot_mem_for_pgid(&snap, de->nvml_index, g->pid);
		if (m > g->gpu_peak_mib)
			g->gpu_peak_mib = m;
		/* Utilisation counts only once the group holds device memory:
		 * before that the process is still starting on the CPU and a 0
		 * would drag the mean down for no reason of the GPU's. */
		double u = nm > 0 ? telemetry_snapshot_util_for_pids(&snap, de->nvml_index, up, (size_t)nm)
				  : telemetry_snapshot_util_for_pgid(&snap, de->nvml_index, g->pid);
		if (u >= 0 && g->gpu_peak_mib > 0) {
			g->util_sum += u > 100 ? 100 : u;
			g->util_n++;
		}
	}
	telemetry_snapshot_fini(&snap);
}

double live__seg_mean_util(const live_seg *g)
{
	return g->util_n > 0 ? g->util_sum / g->util_n : -1;
}

int live__gpu_record(live *d, const live_seg *g, rl_err *err)
{
	double u = live__seg_mean_util(g);
	if (u < 0 || !g->store_id)
		return 0;
	return store_segment_set_util(d->st, g->store_id, u, err);
}
