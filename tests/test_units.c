/*
 * test_units.c - units_parse_size_mib (common/units.h), the one reader of
 * memory sizes shared by the spec, the devices file and RELISH_HOST_MEMORY:
 * every unit of docs/spec.md with its worked value, rounding, limits and
 * what is refused.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/units.h"

static void test_units_table(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		uint64_t mib;
	} good[] = {
		{"1024", 1024},                 /* plain number: MiB */
		{"0", 0},
		{"2.5", 3},                     /* rounded up */
		{"1048576B", 1}, {"1b", 1},     /* bytes; any fraction of a MiB is one */
		{"2048K", 2}, {"2048Ki", 2}, {"2048KiB", 2},
		{"2000KB", 2},                  /* 2e6 bytes = 1.907 MiB */
		{"3M", 3}, {"3Mi", 3}, {"3MiB", 3},
		{"3MB", 3},                     /* 3e6 bytes = 2.861 MiB */
		{"4G", 4096}, {"4Gi", 4096}, {"4GiB", 4096}, {"4gib", 4096},
		{"4GB", 3815},                  /* 4e9 bytes = 3814.7 MiB */
		{"1T", 1048576}, {"1Ti", 1048576}, {"1TiB", 1048576},
		{"1TB", 953675},                /* 1e12 bytes = 953674.3 MiB */
		{"1.5GiB", 1536}, {".5G", 512}, {"0.5GiB", 512},
		{"  512 MiB", 512}, {"512 ", 512}, /* blanks before the number and unit */
		{"1024TiB", 1073741824},        /* 1 PiB: the limit itself */
	};
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		uint64_t v = 7;
		print_message("%s\n", good[i].s);
		assert_int_equal(units_parse_size_mib(good[i].s, &v), 0);
		assert_int_equal(v, good[i].mib);
	}
}

static void test_units_refused(void **state)
{
	(void)state;
	static const char *bad[] = {
		"", " ", "G", "abc", "-1G", "+1G", "1e3", "1e400", "4GX", "4 G B", "12 parsecs",
		"1.2.3", "0x10", "4PiB", "4GiB ",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		uint64_t v = 7;
		print_message("%s\n", bad[i]);
		assert_int_equal(units_parse_size_mib(bad[i], &v), UNITS_NOT_A_SIZE);
		assert_int_equal(v, 7); /* untouched on failure */
	}
	uint64_t v = 7;
	assert_int_equal(units_parse_size_mib(NULL, &v), UNITS_NOT_A_SIZE);
	assert_int_equal(units_parse_size_mib("1025TiB", &v), UNITS_TOO_LARGE);
	assert_int_equal(units_parse_size_mib("99999999999999999999", &v), UNITS_TOO_LARGE);
	assert_int_equal(v, 7);
}

static void test_units_decimal(void **state)
{
	(void)state;
	double v = -1;
	assert_int_equal(units_read_decimal("12.5s", &v), 4);
	assert_true(v == 12.5);
	assert_int_equal(units_read_decimal(".25", &v), 3);
	assert_true(v == 0.25);
	v = -1;
	assert_int_equal(units_read_decimal("s", &v), 0);
	assert_int_equal(units_read_decimal(".", &v), 0);
	assert_int_equal(units_read_decimal("-1", &v), 0);
	assert_true(v == -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_units_table),
		cmocka_unit_test(test_units_refused),
		cmocka_unit_test(test_units_decimal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
