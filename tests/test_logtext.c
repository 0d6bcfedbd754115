/*
 * test_logtext.c - text from users made safe where it is shown: a field
 * of the service's log (rl_log_text, rl_log_value) and a terminal
 * (rl_term_text): every control byte escaped, nothing cut inside an
 * escape, UTF-8 kept for terminals.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "common/logtext.h"

static void test_log_text(void **state)
{
	(void)state;
	char out[64];
	assert_string_equal(rl_log_text("a \"b\" \\ c\n\x1b[2J", out, sizeof out),
			    "a \\\"b\\\" \\\\ c\\x0a\\x1b[2J");
	assert_string_equal(rl_log_value("/plain/path", out, sizeof out), "/plain/path");
	assert_string_equal(rl_log_value("two words", out, sizeof out), "\"two words\"");
	/* cut before an escape that does not fit, never inside one */
	assert_string_equal(rl_log_text("ab\x01", out, 6), "ab");
}

static void test_term_text(void **state)
{
	(void)state;
	char out[128];
	/* a window title, a screen clear and a cursor move, as a trial may
	 * print them: escaped; the newline and tab a message may hold kept */
	assert_string_equal(rl_term_text("RELISH \x1b]0;PWNED\x07\x1b[2J epoch=zz\tx\n", out,
					 sizeof out),
			    "RELISH \\x1b]0;PWNED\\x07\\x1b[2J epoch=zz\tx\n");
	assert_string_equal(rl_term_text("del\x7f cr\r bs\b", out, sizeof out),
			    "del\\x7f cr\\x0d bs\\x08");
	/* UTF-8 as is; a C1 control as UTF-8 encodes it (U+009B, CSI) escaped
	 * whole, its neighbours (U+00A0, U+0080..) told apart */
	assert_string_equal(rl_term_text("caf\xc3\xa9 \xe2\x80\xa6", out, sizeof out),
			    "caf\xc3\xa9 \xe2\x80\xa6");
	assert_string_equal(rl_term_text("a\xc2\x9b" "2Jb\xc2\xa0", out, sizeof out),
			    "a\\xc2\\x9b2Jb\xc2\xa0");
	assert_string_equal(rl_term_text(NULL, out, sizeof out), "");
	/* cut before an escape that does not fit */
	assert_string_equal(rl_term_text("abc\x1b", out, 6), "abc");
	assert_string_equal(rl_term_text("a\xc2\x9b", out, 8), "a");
	/* nothing but printable bytes survives, whatever the input */
	char in[256];
	for (int i = 0; i < 255; i++)
		in[i] = (char)(i + 1);
	in[255] = '\0';
	char big[2048];
	rl_term_text(in, big, sizeof big);
	for (const unsigned char *p = (const unsigned char *)big; *p; p++) {
		assert_false(*p < 0x20 && *p != '\n' && *p != '\t');
		assert_false(*p == 0x7f);
		if (p[0] == 0xc2)
			assert_false(p[1] >= 0x80 && p[1] <= 0x9f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_log_text),
		cmocka_unit_test(test_term_text),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
