/*
 * fuzz_slurm_tools.c - libFuzzer target for what relish reads from Slurm's
 * tools (src/slurm): squeue's jobs (slurm_parse_squeue, then each job's
 * outcome, slurm_job_outcome), sacct's and the job-completion file's lines
 * (slurm_parse_sacct_line, slurm_parse_jobcomp_line), a job's comment
 * (slurm_parse_comment), the step wrapper's lines in a job's output
 * (slurm_parse_step_line: the output is the trial's, so anything), and
 * `scontrol show node|partition -o` (slurm_nodes_parse,
 * slurm_partitions_parse, then the device list built from them).  Not
 * built by default: scripts/fuzz.sh builds and runs it.
 *
 * The first byte chooses the parser; the rest is the text.  Checked
 * besides the sanitizers: a failure hands back nothing; what parses keeps
 * its invariants (every string ends inside its field, counts within their
 * arrays, a device list's devices named).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_nodes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TERMINATED(field) (memchr((field), '\0', sizeof(field)) != NULL)

static void check_job(const slurm_job *j)
{
	if (!TERMINATED(j->state) || !TERMINATED(j->reason) || !TERMINATED(j->node) ||
	    !TERMINATED(j->name))
		abort();
	if (j->is_relish && (!TERMINATED(j->ident.owner) || !TERMINATED(j->ident.experiment) ||
			     !TERMINATED(j->ident.trial)))
		abort();
	exec_result r;
	memset(&r, 0, sizeof r);
	slurm_job_outcome(j->state, j->exit_raw, j->reason, &r);
	if ((unsigned)r.outcome >= SEG_OUT__COUNT || !TERMINATED(r.reason))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	int which = data[0] % 7;
	char *s = malloc(size);
	if (!s)
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	slurm_job j;
	switch (which) {
	case 0: {
		slurm_job *v = (slurm_job *)1;
		size_t n = 99;
		if (slurm_parse_squeue(s, &v, &n, NULL) == 0) {
			if (n && !v)
				abort();
			for (size_t i = 0; i < n; i++)
				check_job(&v[i]);
			free(v);
		}
		break;
	}
	case 1:
		if (slurm_parse_sacct_line(s, &j) == 0)
			check_job(&j);
		break;
	case 2:
		if (slurm_parse_jobcomp_line(s, &j) == 0)
			check_job(&j);
		break;
	case 3: {
		slurm_ident id;
		if (slurm_parse_comment(s, &id) == 0 &&
		    (!TERMINATED(id.owner) || !TERMINATED(id.experiment) || !TERMINATED(id.trial)))
			abort();
		break;
	}
	case 4: {
		/* the bytes as they came, NULs and all */
		slurm_step_line l;
		if (slurm_parse_step_line((const char *)data + 1, size - 1, &l) == 0 &&
		    (l.kind < 1 || l.kind > 2 || l.n_gpus < 0 || l.n_gpus > EXEC_MAX_GPUS ||
		     !TERMINATED(l.node)))
			abort();
		break;
	}
	case 5: {
		slurm_node *v = NULL;
		size_t n = 0;
		rl_err err;
		rl_err_clear(&err);
		if (slurm_nodes_parse(s, &v, &n, &err) == 0) {
			for (size_t i = 0; i < n; i++)
				if (!TERMINATED(v[i].name) || !TERMINATED(v[i].state) ||
				    !TERMINATED(v[i].gpu_type) || !TERMINATED(v[i].partitions) ||
				    v[i].gpus < 0 || v[i].shards < 0)
					abort();
			device_list *l = NULL;
			if (slurm_devices_build(v, n, NULL, 16384, &l, NULL) == 0) {
				for (size_t i = 0; i < l->n; i++)
					if (!l->dev[i].info.name[0] || !l->dev[i].info.uuid[0])
						abort();
				device_list_free(l);
			}
			free(v);
		} else if (!err.msg[0]) {
			abort(); /* a failure says why */
		}
		break;
	}
	default: {
		slurm_partition *v = NULL;
		size_t n = 0;
		if (slurm_partitions_parse(s, &v, &n, NULL) == 0) {
			for (size_t i = 0; i < n; i++)
				if (!TERMINATED(v[i].name))
					abort();
			free(v);
		}
		break;
	}
	}
	free(s);
	return 0;
}
