/*
 * fuzz_config_json.c - libFuzzer target for config_from_json
 * (src/search/space.h): the parameters of a trial as stored in the state
 * database and read back on resume.  Not built by default: scripts/fuzz.sh
 * builds and runs it.
 *
 * The space is fixed (one parameter of each kind, and one active only when
 * opt is "adam").  Checked besides the sanitizers: a failure has a message;
 * a parsed configuration has one typed value per active parameter and none
 * (VAL_NONE) per inactive one, and writing it with config_to_json and
 * reading that back gives the same values.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "search/space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static rl_value choices[] = {
	{.type = VAL_INT, .i = 32}, {.type = VAL_STR, .str = "adam"}, {.type = VAL_BOOL, .i = 1}};
static param_def params[] = {
	{.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-5, .high = 1},
	{.name = "drop", .kind = PARAM_UNIFORM, .low = 0, .high = 0.5},
	{.name = "layers", .kind = PARAM_INT, .low = 1, .high = 8},
	{.name = "opt", .kind = PARAM_CHOICE, .n_choices = 3, .choices = choices},
	{.name = "seed", .kind = PARAM_FIXED, .fixed = {.type = VAL_INT, .i = 7}},
	{.name = "beta", .kind = PARAM_UNIFORM, .low = 0.8, .high = 0.999, .parent = 3, .n_when = 1,
	 .when = &choices[1]},
};
static const space sp = {.n = sizeof params / sizeof params[0], .params = params};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	config c;
	rl_err err;
	rl_err_clear(&err);
	int rc = config_from_json(&sp, text, &c, &err);
	free(text);
	if (rc < 0) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	if (c.n != sp.n)
		abort();
	for (size_t i = 0; i < c.n; i++)
		if ((c.v[i].type == VAL_NONE) != !space_active(&sp, i, &c))
			abort();
	char *again = config_to_json(&sp, &c);
	if (!again)
		abort();
	config d;
	if (config_from_json(&sp, again, &d, &err) < 0)
		abort(); /* what we write must read back */
	for (size_t i = 0; i < c.n; i++)
		if (!value_equal(&c.v[i], &d.v[i]))
			abort();
	config_fini(&d);
	free(again);
	config_fini(&c);
	return 0;
}
