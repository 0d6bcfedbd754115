/*
 * fuzz_spec.c - libFuzzer target for the spec parser (YAML and JSON front
 * ends, schema, cross-key checks).  Not built by default; scripts/fuzz.sh
 * builds and runs it with the other targets, or by hand:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -D_GNU_SOURCE -Isrc \
 *     tests/fuzz/fuzz_spec.c src/spec/[a-z]*.c src/search/space.c src/common/err.c \
 *     $(pkg-config --cflags --libs yaml-0.1 jansson) -lm -o fuzz_spec
 *   ./fuzz_spec -max_total_time=60 tests/spec_cases examples/quickstart
 *
 * The first input byte chooses the front end (odd: JSON), the rest is the
 * document.  Every input must either parse or fail with a message.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "spec/spec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	spec *s = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = spec_parse_text((const char *)data + 1, size - 1, "fuzz", data[0] & 1, &s, &err);
	if (rc == 0) {
		char *json = spec_to_json(s);
		free(json);
		spec_free(s);
	} else if (!err.msg[0]) {
		abort(); /* every failure must say why */
	}
	return 0;
}
