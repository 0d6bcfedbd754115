/*
 * store_lock.c - one driver per database.
 *
 * Two drivers on one database would each take the other's running
 * segments for leftovers of a crash, kill them and write outcomes for the
 * same experiment.  SQLite's own locks cannot say "one driver": they are
 * held per transaction, and readers (relish status, trials ...) must keep
 * working while a run goes on.  So a driver holds an exclusive flock(2) on
 * a file beside the database, PATH-lock, for its whole life:
 *   - flock, not fcntl: SQLite uses fcntl locks on the database file, and
 *     a process that closes any descriptor of a file loses all its fcntl
 *     locks on it; a separate file with a flock is independent of both;
 *   - the kernel drops the lock when the holder dies, even by SIGKILL, so
 *     there is never a stale lock to clean up, and the file is never
 *     removed (removing it would let a second driver lock a new file while
 *     the first still holds the old one);
 *   - the descriptor is close-on-exec, so a trial (or a descendant that
 *     outlives relish) never inherits the lock;
 *   - the holder writes "pid N start T since S" into the file, so a refused
 *     driver can say who holds it.
 * Behind the lock, a generation: each driver adds a row to the drivers
 * table when it opens the database and checks now and then that it is
 * still the latest (store_driver_check), so if the lock is bypassed
 * anyway, the older driver notices that it was taken over and stops
 * instead of fighting over segments.
 */
#include "store/store_impl.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/procid.h"

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* "2024-05-01 12:00:03" (local time) into buf. */
static const char *fmt_since(double t, char *buf, size_t n)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (t <= 0 || !localtime_r(&tt, &tm) || !strftime(buf, n, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, n, "an unknown time");
	return buf;
}

/* Who holds the lock, as the holder wrote it ("pid N, since T"). */
static void holder_text(int fd, char *out, size_t n)
{
	char buf[256];
	ssize_t r = pread(fd, buf, sizeof buf - 1, 0);
	buf[r > 0 ? r : 0] = '\0';
	int pid = 0;
	unsigned long long start = 0;
	double since = 0;
	char when[64];
	if (sscanf(buf, "pid %d start %llu since %lf", &pid, &start, &since) == 3 && pid > 0)
		snprintf(out, n, "pid %d, since %s", pid, fmt_since(since, when, sizeof when));
	else
		snprintf(out, n, "pid unknown: it is just starting");
}

int st_lock_take(store *s, rl_err *err)
{
	char *lp = NULL;
	if (asprintf(&lp, "%s-lock", s->path) < 0)
		return rl_err_set(err, RL_ENOMEM, "opening %s", s->path);
	/* Never through a link, never a FIFO, and only our own: the lock is
	 * truncated and written (a link there had root overwrite the file it
	 * named). */
	int fd = open(lp, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY, 0644);
	struct stat st;
	if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())) {
		close(fd);
		int rc = rl_err_set(err, RL_EPERM, "%s: the driver lock %s is not a file of yours "
				    "(uid %u): remove it, or run relish as its owner", s->path, lp,
				    (unsigned)geteuid());
		free(lp);
		return rc;
	}
	if (fd < 0) {
		int rc = rl_err_sys(err, errno == ELOOP ? RL_EPERM : RL_ESTORE, errno,
				    "%s: opening the driver lock %s", s->path, lp);
		free(lp);
		return rc;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		int rc;
		if (e == EWOULDBLOCK) {
			char who[160];
			holder_text(fd, who, sizeof who);
			rc = rl_err_set(err, RL_EINUSE,
					"%s is in use by another relish (%s); one relish runs on a "
					"database at a time: wait for it to end, stop it, or use another "
					"--db", s->path, who);
		} else {
			rc = rl_err_sys(err, RL_ESTORE, e, "%s: locking %s", s->path, lp);
		}
		close(fd);
		free(lp);
		return rc;
	}
	free(lp);
	/* Who we are, for the message of a refused driver.  A failed write
	 * (full disk) leaves the holder unnamed; the lock holds regardless. */
	uint64_t start = 0;
	procid_start_time(getpid(), &start, NULL);
	char line[128];
	int k = snprintf(line, sizeof line, "pid %d start %" PRIu64 " since %.3f\n", (int)getpid(),
			 start, wall_now());
	if (ftruncate(fd, 0) != 0 || pwrite(fd, line, (size_t)k, 0) != k) {
		/* best effort, see above */
	}
	s->lock_fd = fd;
	return 0;
}

void st_lock_release(store *s)
{
	if (s->lock_fd >= 0) {
		close(s->lock_fd); /* drops the flock */
		s->lock_fd = -1;
	}
}

static const char SQL_DRIVER_ADD[] =
	"INSERT INTO drivers(pid, pid_start_time, started_at) VALUES(?1, ?2, ?3)";
static const char SQL_DRIVER_LATEST[] =
	"SELECT id, pid, started_at FROM drivers ORDER BY id DESC LIMIT 1";

int st_driver_register(store *s, rl_err *err)
{
	uint64_t start = 0;
	procid_start_time(getpid(), &start, NULL);
	sqlite3_stmt *st;
	int rc = st_tx_write(s, err);
	if (rc < 0)
		return rc;
	if ((rc = st_prepare(s, SQL_DRIVER_ADD, &st, err)) == 0) {
		sqlite3_bind_int64(st, 1, getpid());
		sqlite3_bind_int64(st, 2, (int64_t)start);
		sqlite3_bind_double(st, 3, wall_now());
		rc = st_exec_stmt(s, st, err, "registering the driver");
	}
	int64_t id = sqlite3_last_insert_rowid(s->db);
	rc = st_tx_end(s, rc, err);
	if (rc == 0) {
		s->driver_id = id;
	} else if (store_err_no_space(err)) {
		/* A full disk: the service must start all the same (its
		 * experiments wait for space).  The flock alone keeps other
		 * drivers out; without a generation there is no takeover
		 * check (store_driver_check) until a start can write one. */
		rl_err_clear(err);
		rc = 0;
	}
	return rc;
}

int store_driver_check(store *s, rl_err *err)
{
	if (!s->driver_id)
		return 0;
	sqlite3_stmt *st;
	int rc = st_prepare(s, SQL_DRIVER_LATEST, &st, err);
	if (rc < 0)
		return rc;
	int r = sqlite3_step(st);
	if (r == SQLITE_ROW && sqlite3_column_int64(st, 0) != s->driver_id) {
		char when[64];
		rc = rl_err_set(err, RL_EINUSE,
				"another relish (pid %lld, since %s) took over %s; this one stops and "
				"leaves its experiments to it", (long long)sqlite3_column_int64(st, 1),
				fmt_since(sqlite3_column_double(st, 2), when, sizeof when), s->path);
	} else if (r != SQLITE_ROW && r != SQLITE_DONE) {
		rc = st_fail(s, err, "reading the driver generation");
	}
	sqlite3_reset(st);
	return rc;
}

int64_t store_driver_id(const store *s)
{
	return s->driver_id;
}
