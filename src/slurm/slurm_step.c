/*
 * slurm_step.c - `relish slurm-step -- PROGRAM ARGS...`: what a relish job
 * runs on the compute node (slurm/slurm.h; the job script execs it).
 *
 * It is the part of the executor that must sit beside the trial: memory is
 * measured where it is used.  It prints
 *   relish-slurm: start node=N gpus=I,J at=T
 * runs the trial in a process group of its own (argv and environment
 * untouched), passes on the signals Slurm sends (scancel, the time limit:
 * SIGTERM, later SIGKILL to everything in the job anyway), samples the
 * group's RSS every 200 ms from /proc (plus the leader's high-water mark)
 * and, where NVML answers on the node, the group's GPU memory, and when
 * the trial is gone prints
 *   relish-slurm: end exit=C|signal=S peak_rss_mib=R peak_gpu_mib=G at=T
 * and exits as the trial did.  Both lines go to standard output, which is
 * the job's output file that relish reads; they are log lines to the
 * trial contract.
 */
#include "slurm/slurm.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "telemetry/nvml.h"
#include "telemetry/procmem.h"

static volatile sig_atomic_t child_pgid;

static void forward(int sig)
{
	if (child_pgid > 0)
		kill(-(pid_t)child_pgid, sig);
}

/* SIGCHLD only wakes the sampling sleep, so the end is seen at once and not
 * at the next 200 ms sample. */
static void child_ended(int sig)
{
	(void)sig;
}

static double wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The GPUs Slurm gave the job (SLURM_JOB_GPUS: the node's indices, also
 * when ConstrainDevices renumbers CUDA_VISIBLE_DEVICES), "," separated. */
static const char *job_gpus(void)
{
	const char *v = getenv("SLURM_JOB_GPUS");
	if (!v || !*v)
		v = getenv("SLURM_STEP_GPUS");
	if (!v || !*v)
		v = getenv("CUDA_VISIBLE_DEVICES");
	return v && *v ? v : "";
}

int slurm_step_main(int argc, char **argv)
{
	static const char usage[] =
		"usage: relish slurm-step -- PROGRAM [ARGS...]\n\n"
		"What a relish Slurm job runs on its node (docs/slurm.md): it prints a start\n"
		"line, runs PROGRAM in a process group of its own (signals are passed on),\n"
		"samples its memory, prints an end line and exits as PROGRAM did.\n";
	int first = 1;
	if (first < argc && (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (first < argc && !strcmp(argv[first], "--"))
		first++;
	if (first >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	char host[256] = "";
	const char *node = getenv("SLURMD_NODENAME");
	if (!node || !*node) {
		gethostname(host, sizeof host - 1);
		node = host;
	}
	printf(SLURM_STEP_PREFIX "start node=%s gpus=%s at=%.6f\n", node, job_gpus(), wall());
	fflush(stdout);

	sigset_t all, old;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, SLURM_STEP_PREFIX "fork: %s\n", strerror(errno));
		return 127;
	}
	if (pid == 0) {
		setpgid(0, 0);
		sigprocmask(SIG_SETMASK, &old, NULL);
		execvp(argv[first], argv + first);
		fprintf(stderr, SLURM_STEP_PREFIX "cannot run %s: %s\n", argv[first], strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid);
	child_pgid = pid;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = forward;
	static const int pass[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGCONT};
	for (size_t i = 0; i < sizeof pass / sizeof *pass; i++)
		sigaction(pass[i], &sa, NULL);
	sa.sa_handler = child_ended;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	sigprocmask(SIG_SETMASK, &old, NULL);

	telemetry *tel = NULL;
	if (telemetry_open(&tel, NULL) < 0 || !telemetry_available(tel)) {
		telemetry_close(tel);
		tel = NULL;
	}
	uint64_t peak_rss = 0, peak_gpu = 0;
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			break;
		pid_t g = pid;
		uint64_t rss = 0, hwm = 0;
		if (procmem_sample(&g, 1, &rss, &hwm, NULL, NULL) == 0) {
			if (rss > peak_rss)
				peak_rss = rss;
			if (hwm > peak_rss)
				peak_rss = hwm;
		}
		if (tel) {
			telemetry_snapshot snap;
			if (telemetry_sample(tel, wall(), &snap, NULL) == 0) {
				uint64_t sum = telemetry_snapshot_mem_for_pgid(&snap, -1, g);
				if (sum > peak_gpu)
					peak_gpu = sum;
				telemetry_snapshot_fini(&snap);
			}
		}
		struct timespec ts = {0, 200 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	telemetry_close(tel);
	child_pgid = 0;
	if (WIFEXITED(status))
		printf(SLURM_STEP_PREFIX "end exit=%d peak_rss_mib=%llu peak_gpu_mib=%llu at=%.6f\n",
		       WEXITSTATUS(status), (unsigned long long)(peak_rss >> 20),
		       (unsigned long long)peak_gpu, wall());
	else
		printf(SLURM_STEP_PREFIX "end signal=%d peak_rss_mib=%llu peak_gpu_mib=%llu at=%.6f\n",
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0,
		       (unsigned long long)(peak_rss >> 20), (unsigned long long)peak_gpu, wall());
	fflush(stdout);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		return 128 + sig;
	}
	return 1;
}
