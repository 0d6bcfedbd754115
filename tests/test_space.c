/*
 * test_space.c - values, the unit-cube mapping and JSON round trips.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "search/space.h"

static void test_int_log_roundtrip(void **state)
{
	(void)state;
	param_def p = {.name = "hidden", .kind = PARAM_INT, .low = 16, .high = 512, .log = 1};
	for (int k = 16; k <= 512; k++) {
		rl_value v = {.type = VAL_INT, .i = k}, back;
		double u = space_to_unit(&p, &v);
		assert_true(u >= 0 && u < 1);
		assert_int_equal(space_from_unit(&p, u, &back, NULL), 0);
		assert_int_equal(back.type, VAL_INT);
		assert_int_equal(back.i, k);
	}
	rl_value lo, hi;
	space_from_unit(&p, 0.0, &lo, NULL);
	space_from_unit(&p, 1.0, &hi, NULL);
	assert_int_equal(lo.i, 16);
	assert_int_equal(hi.i, 512);
}

static void test_loguniform_midpoint(void **state)
{
	(void)state;
	param_def p = {.name = "lr", .kind = PARAM_LOGUNIFORM, .low = 1e-4, .high = 1e-2};
	rl_value v;
	space_from_unit(&p, 0.5, &v, NULL);
	assert_float_equal(v.f, 1e-3, 1e-12);
}

static void test_choice_and_json(void **state)
{
	(void)state;
	rl_value ch[3] = {{.type = VAL_INT, .i = 32}, {.type = VAL_INT, .i = 64},
			  {.type = VAL_STR, .str = "adam"}};
	param_def ps[2] = {{.name = "batch", .kind = PARAM_CHOICE, .n_choices = 3, .choices = ch},
			   {.name = "lr", .kind = PARAM_UNIFORM, .low = 0, .high = 1}};
	space s = {.n = 2, .params = ps};
	config c;
	assert_int_equal(config_init(&c, 2, NULL), 0);
	assert_int_equal(space_from_unit(&ps[0], 0.99, &c.v[0], NULL), 0);
	assert_string_equal(c.v[0].str, "adam");
	c.v[1].type = VAL_FLOAT;
	c.v[1].f = 0.1;
	char *j = config_to_json(&s, &c);
	assert_string_equal(j, "{\"batch\":\"adam\",\"lr\":0.10000000000000001}");
	config back;
	assert_int_equal(config_from_json(&s, j, &back, NULL), 0);
	assert_true(value_equal(&back.v[0], &c.v[0]));
	assert_true(value_equal(&back.v[1], &c.v[1]));
	char buf[64];
	value_format(&back.v[1], buf, sizeof buf);
	assert_string_equal(buf, "0.1");
	free(j);
	config_fini(&back);
	config_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_int_log_roundtrip),
		cmocka_unit_test(test_loguniform_midpoint),
		cmocka_unit_test(test_choice_and_json),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
