/*
 * replay_main.c - runs a libFuzzer target without libFuzzer: every file
 * named on the command line, and every regular file in a folder named
 * there, is given once to LLVMFuzzerTestOneInput.  Linked with each
 * tests/fuzz/fuzz_T.c into replay_T by tests/tests.cmake, so that the
 * ordinary sanitizer build (gcc, no clang needed) replays the seeds and
 * the committed regression inputs (tests/fuzz/regress/T/) in `make test`.
 * A target aborts on a broken invariant and the sanitizers stop the
 * process on memory errors: exit status 0 means every input passed.
 * Files are taken in name order so that a failure is reproducible; the
 * last line printed before a crash names the input.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
		return -1;
	}
	size_t cap = 1 << 16, len = 0;
	uint8_t *buf = malloc(cap);
	for (size_t n; buf && (n = fread(buf + len, 1, cap - len, f)) > 0;) {
		len += n;
		if (len == cap) {
			uint8_t *nb = realloc(buf, cap *= 2);
			if (!nb)
				free(buf);
			buf = nb;
		}
	}
	fclose(f);
	if (!buf) {
		fprintf(stderr, "replay: %s: out of memory\n", path);
		return -1;
	}
	/* An exact-size copy, so that the sanitizers see a read past the end. */
	uint8_t *exact = malloc(len ? len : 1);
	if (!exact) {
		free(buf);
		return -1;
	}
	memcpy(exact, buf, len);
	free(buf);
	fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(exact, len);
	free(exact);
	return 0;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_dir(const char *dir, size_t *count)
{
	DIR *d = opendir(dir);
	if (!d) {
		fprintf(stderr, "replay: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	char **names = NULL;
	size_t n = 0, cap = 0;
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || !strncmp(e->d_name, "README", 6))
			continue;
		if (n == cap) {
			char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *nn);
			if (!nn)
				break;
			names = nn;
		}
		if (!(names[n] = malloc(strlen(dir) + strlen(e->d_name) + 2)))
			break;
		sprintf(names[n++], "%s/%s", dir, e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof *names, cmp_names);
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		if (stat(names[i], &st) == 0 && S_ISREG(st.st_mode)) {
			if (run_file(names[i]) < 0)
				rc = -1;
			else
				(*count)++;
		}
		free(names[i]);
	}
	free(names);
	return rc;
}

int main(int argc, char **argv)
{
	size_t count = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) < 0) {
			fprintf(stderr, "replay: %s: %s\n", argv[i], strerror(errno));
			rc = 1;
		} else if (S_ISDIR(st.st_mode)) {
			rc |= run_dir(argv[i], &count) < 0;
		} else if (run_file(argv[i]) < 0) {
			rc = 1;
		} else {
			count++;
		}
	}
	if (count == 0) {
		fprintf(stderr, "replay: no inputs given\n");
		return 1;
	}
	printf("replay: %zu inputs ran to the end%s\n", count, rc ? "; some could not be read" : "");
	return rc;
}
