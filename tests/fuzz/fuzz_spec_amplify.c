/*
 * fuzz_spec_amplify.c - libFuzzer target: the spec parser's memory is
 * bounded by its input.  relish serve parses every submission, so a spec
 * whose text is small but whose parse allocates a great deal (YAML aliases
 * of a long scalar, "billion laughs") would let one user exhaust the
 * service's memory.  Every allocation made while one input is parsed
 * (spec_parse_text, then spec_to_json as the service does) is counted
 * through the sanitizers' malloc and free hooks, and the peak of what is
 * held at once must stay under AMPLIFY_BASE + AMPLIFY_PER_BYTE * size;
 * beyond it the target aborts, naming both.  Built like the other targets
 * (scripts/fuzz.sh; replayed by fuzz_replay_spec_amplify in the sanitizer
 * build, tests/tests.cmake).
 *
 * The first input byte chooses the front end (odd: JSON), the rest is the
 * document.  RELISH_AMPLIFY_PRINT=1 prints each input's size and peak.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "spec/node.h"
#include "spec/spec.h"

/* The tree's own budget (node.h) plus what libyaml, jansson, the schema and
 * the JSON text hold beside it; measured on the seeds: at most about 20
 * bytes per input byte beyond 0.3 MiB. */
#define AMPLIFY_BASE (4u << 20)
#define AMPLIFY_PER_BYTE (2 * NODE_MAX_BYTES_PER_BYTE)

/* The sanitizers' allocator interface (sanitizer/allocator_interface.h,
 * which gcc does not ship). */
int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void *, size_t),
					      void (*free_hook)(const volatile void *));
size_t __sanitizer_get_allocated_size(const volatile void *p);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int counting;
static long long held, peak;

static void on_malloc(const volatile void *p, size_t n)
{
	(void)p;
	if (!counting)
		return;
	held += (long long)n;
	if (held > peak)
		peak = held;
}

static void on_free(const volatile void *p)
{
	if (counting && p)
		held -= (long long)__sanitizer_get_allocated_size(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int hooked;
	if (!hooked) {
		__sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
		hooked = 1;
	}
	if (size < 1)
		return 0;
	held = peak = 0;
	counting = 1;
	spec *s = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = spec_parse_text((const char *)data + 1, size - 1, "fuzz", data[0] & 1, &s, &err);
	if (rc == 0) {
		char *json = spec_to_json(s);
		free(json);
		spec_free(s);
	}
	counting = 0;
	unsigned long long bound = AMPLIFY_BASE + (unsigned long long)AMPLIFY_PER_BYTE * size;
	if (getenv("RELISH_AMPLIFY_PRINT"))
		fprintf(stderr, "amplify: %zu bytes in, peak %lld bytes held (%.1f per byte), %s\n",
			size, peak, (double)peak / (double)size, rc == 0 ? "parsed" : err.msg);
	if ((unsigned long long)peak > bound) {
		fprintf(stderr, "fuzz_spec_amplify: %zu bytes of input held %lld bytes at once "
				"(bound %llu)\n", size, peak, bound);
		abort();
	}
	return 0;
}
