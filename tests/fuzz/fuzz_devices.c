/*
 * fuzz_devices.c - libFuzzer target for the devices file parser
 * (devices_config_parse, src/telemetry/inventory.h; YAML or JSON text) and
 * the size reader it uses (units_parse_size_mib, src/common/units.h).  Not
 * built by default: scripts/fuzz.sh builds and runs it.
 *
 * The host's memory and CPUs are given in the options so that no input
 * makes the parser read /proc.  Checked besides the sanitizers: every
 * failure has a message and hands back no list; parsed devices have names
 * and GPUs have memory; a size, when read, is at most 1 PiB.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/units.h"
#include "telemetry/inventory.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const devices_options opts = {.host_mem_mib = 4096, .host_cpus = 2};
	device_list *l = NULL;
	rl_err err;
	rl_err_clear(&err);
	int rc = devices_config_parse((const char *)data, size, "fuzz.yaml", &opts, &l, &err);
	if (rc == 0) {
		for (size_t i = 0; i < l->n; i++) {
			if (!l->dev[i].info.name[0])
				abort();
			if (l->dev[i].info.is_gpu && !l->dev[i].info.mem_total_mib)
				abort();
		}
		device_list_free(l);
	} else if (!err.msg[0] || l) {
		abort(); /* a failure says why and hands back nothing */
	}

	/* The same bytes as one size (NUL-terminated copy). */
	char *s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	uint64_t mib = 0;
	if (units_parse_size_mib(s, &mib) == 0 && mib > (uint64_t)UNITS_MAX_MIB)
		abort();
	free(s);
	return 0;
}
