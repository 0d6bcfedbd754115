/*
 * spawn.c - a trial process started with clone(CLONE_VM | CLONE_VFORK), not
 * fork (see spawn.h for why and what the child does).
 *
 * Rules for the child functions below (they run in relish's address space,
 * beside relish's other threads, on a stack of their own): raw system calls
 * only, through syscall(2), no library function that may lock, allocate or
 * be intercepted by the sanitizers, and no sanitizer instrumentation
 * (CHILD_FN).  They write errno only in the parent thread's errno, which
 * that thread, suspended until the child executes or exits, does not read
 * meanwhile.
 */
#include "exec/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The child's frames are small (the largest holds one PATH_MAX path); below
 * malloc's mmap threshold, so that no launch maps and unmaps memory (an
 * unmap interrupts every CPU running one of relish's threads). */
#define CHILD_STACK (32 * 1024)
#define DEFAULT_PATH "/bin:/usr/bin"
#define CHILD_FN __attribute__((noinline, no_sanitize("address", "undefined")))

/* Shared between the parent and the child (which writes err, join_err and,
 * for /bin/sh, script). */
typedef struct child_ctx {
	const spawn_req *r;
	char **sh_argv;            /* "/bin/sh", the script, argv[1..], NULL */
	volatile int err;          /* errno of the failed step; 0: executed */
	int in_cgroup;             /* started in its cgroup (clone3): no join */
	volatile int join_err;
} child_ctx;

/* The kernel's sigaction for rt_sigaction: all zero is SIG_DFL, no flags,
 * empty mask, whatever the architecture's layout (large enough for all). */
typedef struct ksigaction {
	unsigned long words[8];
} ksigaction;

CHILD_FN static size_t c_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

CHILD_FN static void c_fail(child_ctx *c, int e)
{
	c->err = e ? e : EINVAL;
	syscall(SYS_exit, 127);
	for (;;)
		;
}

/* Close every descriptor from first up (the child's table is its own: no
 * CLONE_FILES).  close_range (Linux 5.9); before it, one close per
 * descriptor below the soft RLIMIT_NOFILE. */
CHILD_FN static void c_close_from(int first)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)first, ~0u, 0u) == 0)
		return;
#endif
	struct rlimit rl;
	long max = 65536;
	if (syscall(SYS_getrlimit, RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < (rlim_t)max)
		max = (long)rl.rlim_cur;
	for (long fd = first; fd < max; fd++)
		syscall(SYS_close, fd);
}

/* execve, and /bin/sh for a file the kernel does not know how to run. */
CHILD_FN static int c_exec(child_ctx *c, const char *path, char *const *envp)
{
	syscall(SYS_execve, path, c->r->argv, envp);
	int e = errno;
	if (e == ENOEXEC) {
		c->sh_argv[1] = (char *)path;
		syscall(SYS_execve, "/bin/sh", c->sh_argv, envp);
	}
	return e;
}

CHILD_FN static int child_main(void *arg)
{
	child_ctx *c = arg;
	const spawn_req *r = c->r;
	/* Dispositions a fresh process expects: relish's handlers must not run
	 * here, and what relish ignores (SIGPIPE) the trial must not. */
	ksigaction dfl;
	for (size_t i = 0; i < sizeof dfl.words / sizeof dfl.words[0]; i++)
		dfl.words[i] = 0;
	for (int s = 1; s < 65; s++)
		if (s != SIGKILL && s != SIGSTOP)
			syscall(SYS_rt_sigaction, s, &dfl, NULL, (size_t)8);
	if (!c->in_cgroup && r->join_fd >= 0 && syscall(SYS_write, r->join_fd, "0", (size_t)1) != 1)
		c->join_err = errno ? errno : EIO;
	/* the CPU limit's cgroup (v1): one it cannot join leaves it unlimited,
	 * as relish without a cpu controller would */
	if (r->cpu_join_fd >= 0)
		syscall(SYS_write, r->cpu_join_fd, "0", (size_t)1);
	if (r->new_session && syscall(SYS_setsid) < 0)
		c_fail(c, errno);
	/* Above every target first, so that no source is overwritten; the
	 * copies are close-on-exec. */
	int tmp[SPAWN_MAX_FDS];
	for (int i = 0; i < r->n_fds; i++) {
		long fd = syscall(SYS_fcntl, r->fds[i], F_DUPFD_CLOEXEC, (long)r->n_fds);
		if (fd < 0)
			c_fail(c, errno);
		tmp[i] = (int)fd;
	}
	for (int i = 0; i < r->n_fds; i++)
		if (syscall(SYS_dup3, tmp[i], i, 0) < 0)
			c_fail(c, errno);
	c_close_from(r->n_fds);
	if (r->cwd && syscall(SYS_chdir, r->cwd) < 0)
		c_fail(c, errno);
	uint64_t none = 0;
	syscall(SYS_rt_sigprocmask, SIG_SETMASK, &none, NULL, (size_t)8);

	char *const *envp = r->envp ? r->envp : environ;
	const char *file = r->file;
	int slash = 0;
	for (const char *s = file; *s; s++)
		slash |= *s == '/';
	if (slash)
		c_fail(c, c_exec(c, file, envp));
	/* execvp's search: PATH from the trial's environment. */
	const char *path = DEFAULT_PATH;
	for (char *const *e = envp; e && *e; e++) {
		const char *v = *e;
		if (v[0] == 'P' && v[1] == 'A' && v[2] == 'T' && v[3] == 'H' && v[4] == '=') {
			path = v + 5;
			break;
		}
	}
	size_t fl = c_strlen(file);
	char buf[PATH_MAX];
	int seen_eacces = 0, last = ENOENT;
	for (const char *p = path;;) {
		const char *end = p;
		while (*end && *end != ':')
			end++;
		size_t dl = (size_t)(end - p);
		if (dl + 1 + fl + 1 <= sizeof buf) {
			size_t k = 0;
			if (dl == 0) {
				buf[k++] = '.';
			} else {
				for (size_t i = 0; i < dl; i++)
					buf[k++] = p[i];
			}
			buf[k++] = '/';
			for (size_t i = 0; i < fl; i++)
				buf[k++] = file[i];
			buf[k] = '\0';
			int e = c_exec(c, buf, envp);
			switch (e) {
			case EACCES:
				seen_eacces = 1;
				/* fall through */
			case ENOENT:
			case ENOTDIR:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
				last = e;
				break;
			default:
				c_fail(c, e);
			}
		} else {
			last = ENAMETOOLONG;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	c_fail(c, seen_eacces ? EACCES : last);
	return 127;
}

CHILD_FN static int probe_main(void *arg)
{
	child_ctx *c = arg;
	if (syscall(SYS_write, c->r->join_fd, "0", (size_t)1) != 1)
		c->err = errno ? errno : EIO;
	syscall(SYS_exit, 0);
	return 0;
}

static void reap(pid_t pid)
{
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

#if defined(__x86_64__)
/* clone3's arguments (linux/sched.h, version 2: with cgroup). */
typedef struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size, cgroup;
} clone3_args;

#define SPAWN_CLONE_INTO_CGROUP 0x200000000ULL

/*
 * clone3 with the child started on its own stack in fn(arg), exiting with
 * its return value: what glibc's clone does for clone, which glibc does
 * not offer for clone3.  The kernel sets the child's stack pointer to
 * stack + stack_size (16-byte aligned here, so fn is entered as the ABI
 * expects); the child has every register of the parent but rax (0), rcx
 * and r11, so fn and arg reach it in registers the compiler chose among
 * the rest (none is touched before the call: rbp may be one of them).
 * Returns the child's pid or a negative errno.
 */
static long clone3_call(clone3_args *a, int (*fn)(void *), void *arg)
{
	long ret;
	__asm__ volatile("syscall\n\t"
			 "test %%rax, %%rax\n\t"
			 "jnz 1f\n\t"
			 "mov %[arg], %%rdi\n\t"
			 "call *%[fn]\n\t"
			 "mov %%eax, %%edi\n\t"
			 "mov $60, %%eax\n\t" /* SYS_exit */
			 "syscall\n\t"
			 "hlt\n\t"
			 "1:\n\t"
			 : "=a"(ret)
			 : "0"((long)SYS_clone3), "D"(a), "S"(sizeof *a), [fn] "r"(fn), [arg] "r"(arg)
			 : "rcx", "r11", "memory");
	return ret;
}
#define SPAWN_HAVE_CLONE3 1
#endif

/* clone with every signal blocked in this thread: until the child has reset
 * the dispositions, a handler of relish's would run in the child.  With
 * cgroup_fd >= 0 the kernel starts the child in that cgroup (clone3's
 * CLONE_INTO_CGROUP, Linux 5.7+): no migration, which takes a lock that
 * waits for an RCU grace period (several milliseconds, with the launching
 * thread suspended); *into says whether it did. */
static pid_t clone_vfork(int (*fn)(void *), child_ctx *c, int cgroup_fd, int *into, int *err)
{
	char *stack = malloc(CHILD_STACK);
	if (!stack) {
		*err = ENOMEM;
		return -1;
	}
	/* The stack grows down on every architecture relish builds on. */
	void *top = (void *)(((uintptr_t)stack + CHILD_STACK) & ~(uintptr_t)63);
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid_t pid = -1;
	*into = 0;
#ifdef SPAWN_HAVE_CLONE3
	if (cgroup_fd >= 0) {
		uintptr_t base = (uintptr_t)stack;
		clone3_args a = {
			.flags = CLONE_VM | CLONE_VFORK | SPAWN_CLONE_INTO_CGROUP,
			.exit_signal = SIGCHLD,
			.stack = base,
			.stack_size = ((base + CHILD_STACK) & ~(uintptr_t)63) - base,
			.cgroup = (uint64_t)cgroup_fd,
		};
		c->in_cgroup = 1;
		long r = clone3_call(&a, fn, c);
		c->in_cgroup = r > 0;
		if (r > 0) {
			pid = (pid_t)r;
			*into = 1;
		}
		/* else (no clone3, a cgroup it refuses): the plain clone below,
		 * and the child joins by itself */
	}
#else
	(void)cgroup_fd;
#endif
	if (pid < 0)
		pid = clone(fn, top, CLONE_VM | CLONE_VFORK | SIGCHLD, c);
	*err = pid < 0 ? errno : 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* The child has executed (its own memory now) or exited: its stack
	 * is ours again. */
	free(stack);
	return pid;
}

int spawn_process(spawn_req *r)
{
	if (r->n_fds < 0 || r->n_fds > SPAWN_MAX_FDS || !r->file || !r->argv)
		return -EINVAL;
	size_t argc = 0;
	while (r->argv[argc])
		argc++;
	child_ctx c = {.r = r};
	c.sh_argv = calloc(argc + 2, sizeof *c.sh_argv);
	if (!c.sh_argv)
		return -ENOMEM;
	c.sh_argv[0] = "/bin/sh";
	for (size_t i = 1; i < argc; i++)
		c.sh_argv[i + 1] = r->argv[i];
	int err, into;
	pid_t pid = clone_vfork(child_main, &c, r->cgroup_fd, &into, &err);
	free(c.sh_argv);
	if (pid < 0)
		return -err;
	if (c.err) {
		reap(pid);
		return -c.err;
	}
	r->pid = pid;
	r->join_errno = c.join_err;
	return 0;
}

int spawn_probe_join(int join_fd)
{
	spawn_req r = {.join_fd = join_fd, .cgroup_fd = -1, .cpu_join_fd = -1};
	child_ctx c = {.r = &r};
	int err, into;
	pid_t pid = clone_vfork(probe_main, &c, -1, &into, &err);
	if (pid < 0)
		return -err;
	reap(pid);
	return c.err ? -c.err : 0;
}
