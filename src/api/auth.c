/*
 * auth.c - peer credentials, the token file and users (auth.h).
 */
#include "api/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define TOKEN_MIN 16
#define TOKEN_MAX 256

typedef struct token_row {
	char token[TOKEN_MAX + 1];
	size_t len;
	uid_t uid;
} token_row;

struct api_tokens {
	token_row *row;
	size_t n;
};

void api_tokens_free(api_tokens *t)
{
	if (!t)
		return;
	if (t->row)
		memset(t->row, 0, t->n * sizeof *t->row); /* no secrets left in freed memory */
	free(t->row);
	free(t);
}

api_tokens *api_tokens_none(void)
{
	return calloc(1, sizeof(api_tokens));
}

size_t api_tokens_count(const api_tokens *t)
{
	return t ? t->n : 0;
}

static int token_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       strchr("._~+/=-", c) != NULL;
}

int api_tokens_load(const char *path, api_tokens **out, rl_err *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return rl_err_sys(err, errno == ENOENT ? RL_ENOTFOUND : RL_EIO, errno,
				  "token file %s", path);
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return rl_err_set(err, RL_EINVAL, "token file %s is not a regular file", path);
	}
	if (st.st_uid != geteuid()) {
		close(fd);
		return rl_err_set(err, RL_EPERM, "token file %s belongs to uid %u, not to the "
				  "service's user (uid %u)", path, (unsigned)st.st_uid,
				  (unsigned)geteuid());
	}
	if (st.st_mode & 077) {
		close(fd);
		return rl_err_set(err, RL_EPERM, "token file %s is mode %04o: others may read it; "
				  "chmod 600 %s", path, (unsigned)(st.st_mode & 07777), path);
	}
	FILE *f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return rl_err_sys(err, RL_EIO, errno, "token file %s", path);
	}
	api_tokens *t = calloc(1, sizeof *t);
	if (!t) {
		fclose(f);
		return rl_err_set(err, RL_ENOMEM, "token file");
	}
	char line[1024];
	int lineno = 0, rc = 0;
	size_t cap = 0;
	while (rc == 0 && fgets(line, sizeof line, f)) {
		lineno++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = '\0';
		char *tok = strtok(line, " \t\r\n");
		if (!tok)
			continue;
		char *user = strtok(NULL, " \t\r\n");
		char *extra = user ? strtok(NULL, " \t\r\n") : NULL;
		size_t len = strlen(tok);
		if (!user || extra) {
			rc = rl_err_set(err, RL_EPARSE, "%s:%d: expected \"TOKEN USER\"", path, lineno);
			break;
		}
		for (size_t i = 0; i < len && rc == 0; i++)
			if (!token_char(tok[i]))
				rc = rl_err_set(err, RL_EPARSE, "%s:%d: a token may hold only "
						"[A-Za-z0-9._~+/=-]", path, lineno);
		if (rc == 0 && (len < TOKEN_MIN || len > TOKEN_MAX))
			rc = rl_err_set(err, RL_EPARSE, "%s:%d: a token has %d to %d characters, this "
					"one %zu", path, lineno, TOKEN_MIN, TOKEN_MAX, len);
		struct passwd pwb, *pw = NULL;
		char buf[4096];
		if (rc == 0 && (getpwnam_r(user, &pwb, buf, sizeof buf, &pw) != 0 || !pw))
			rc = rl_err_set(err, RL_EPARSE, "%s:%d: no user '%s' on this machine", path,
					lineno, user);
		for (size_t i = 0; rc == 0 && i < t->n; i++)
			if (t->row[i].len == len && !memcmp(t->row[i].token, tok, len))
				rc = rl_err_set(err, RL_EPARSE, "%s:%d: this token is given twice", path,
						lineno);
		if (rc < 0)
			break;
		if (t->n == cap) {
			size_t nc = cap ? cap * 2 : 8;
			token_row *v = realloc(t->row, nc * sizeof *v);
			if (!v) {
				rc = rl_err_set(err, RL_ENOMEM, "token file");
				break;
			}
			t->row = v;
			cap = nc;
		}
		token_row *r = &t->row[t->n++];
		memset(r, 0, sizeof *r);
		memcpy(r->token, tok, len);
		r->len = len;
		r->uid = pw->pw_uid;
	}
	memset(line, 0, sizeof line);
	fclose(f);
	if (rc < 0) {
		api_tokens_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* Equal in time that does not depend on where a and b differ. */
static int same(const char *a, size_t na, const char *b, size_t nb)
{
	unsigned char d = (unsigned char)(na != nb);
	for (size_t i = 0; i < nb; i++)
		d |= (unsigned char)(b[i] ^ (i < na ? a[i] : 0));
	return d == 0;
}

int api_tokens_find(const api_tokens *t, const char *token, uid_t *uid, rl_err *err)
{
	size_t len = strlen(token);
	int found = -1;
	for (size_t i = 0; t && i < t->n; i++)
		if (same(token, len, t->row[i].token, t->row[i].len))
			found = (int)i;
	if (found < 0)
		return rl_err_set(err, RL_EAUTH, "this token is not in the service's token file");
	*uid = t->row[found].uid;
	return 0;
}

void api_user_of_uid(uid_t uid, const api_policy *pol, api_via via, api_user *out)
{
	api_user u;
	memset(&u, 0, sizeof u);
	u.via = via;
	u.uid = uid;
	u.root = uid == 0;
	struct passwd pwb, *pw = NULL;
	char buf[4096];
	if (getpwuid_r(uid, &pwb, buf, sizeof buf, &pw) == 0 && pw) {
		snprintf(u.name, sizeof u.name, "%s", pw->pw_name);
		u.gid = pw->pw_gid;
		if (pol && pol->have_admin_gid) {
			gid_t groups[256];
			int n = 256;
			if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &n) >= 0)
				for (int i = 0; i < n; i++)
					if (groups[i] == pol->admin_gid)
						u.admin = 1;
		}
	} else {
		snprintf(u.name, sizeof u.name, "uid%u", (unsigned)uid);
		u.gid = (gid_t)-1;
	}
	*out = u;
}

int api_peer_uid(int fd, uid_t *uid, rl_err *err)
{
	struct ucred cr;
	socklen_t len = sizeof cr;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0)
		return rl_err_sys(err, RL_EAUTH, errno, "reading the peer's credentials");
	*uid = cr.uid;
	return 0;
}
