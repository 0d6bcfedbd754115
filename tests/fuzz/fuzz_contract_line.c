/*
 * fuzz_contract_line.c - libFuzzer target for the trial contract's line
 * parser (contract_parse_line, src/exec/contract.h): the metric lines
 * "RELISH name=value ...", "RELISH_DONE to=B" and "RELISH_READY" that every
 * trial prints.  Not built by default: scripts/fuzz.sh builds and runs it.
 *
 * The input is one line (the driver hands the parser lines without their
 * newline; embedded NULs and CRs are fair game).  Checked besides the
 * sanitizers: the kind is a known one, a metric line holds 1..32 distinct
 * named finite values whose names are NUL-terminated and can be looked up,
 * a bad line and a near miss say why.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "exec/contract.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	contract_line l;
	contract_kind k = contract_parse_line((const char *)data, size, &l);
	if (k != l.kind || (int)k < CONTRACT_LOG || k > CONTRACT_NEAR)
		abort();
	if ((k == CONTRACT_BAD || k == CONTRACT_NEAR) && !l.why)
		abort(); /* a bad line, and a near miss, must say why */
	if (l.text != (const char *)data || l.len > size)
		abort(); /* the line itself, for messages */
	if (k == CONTRACT_DONE && !isfinite(l.done_to))
		abort();
	if (k != CONTRACT_METRICS)
		return 0;
	if (l.n == 0 || l.n > CONTRACT_MAX_METRICS)
		abort();
	for (size_t i = 0; i < l.n; i++) {
		if (!memchr(l.m[i].name, '\0', sizeof l.m[i].name) || !l.m[i].name[0])
			abort();
		if (!isfinite(l.m[i].value))
			abort();
		double v;
		if (!contract_metric_get(&l, l.m[i].name, &v) || v != l.m[i].value)
			abort(); /* names are distinct, so the lookup finds this pair */
	}
	return 0;
}
