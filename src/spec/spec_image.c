/*
 * spec_image.c - what trial.image may be: a plain image reference,
 * [registry/]name[:tag][@digest], in the grammar registries and engines
 * share (OCI distribution's reference grammar), and nothing else.
 *
 * The engine runs as root under relish serve, and podman reads more than
 * references: a "transport:" prefix (docker-archive:PATH, oci-archive:,
 * dir:, containers-storage:[...]) makes it read a file or store of the
 * submitter's choosing as root, import it and move the tags it carries,
 * even with --pull=never.  One user could then replace an image another
 * user's experiments name, or read an archive only root may.  A reference
 * that parses here names an image in the engine's local store and nothing
 * more.
 */
#include "spec/spec.h"

#include <string.h>

/* The transports of the engines' image library: "NAME:..." where NAME is
 * one of these is read as a transport, not as an image called NAME with a
 * tag, so such a reference is refused even when it parses as name:tag. */
static const char *const image_transports[] = {
	"docker", "docker-archive", "docker-daemon", "oci", "oci-archive", "dir",
	"containers-storage", "tarball", "sif", "ostree",
};

static int lower_alnum(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int alnum(char c)
{
	return lower_alnum(c) || (c >= 'A' && c <= 'Z');
}

/* A path component: lower-case alphanumerics, separated by one '.', one
 * or two '_', or any number of '-'. */
static int path_component(const char *s, size_t n)
{
	if (!n || !lower_alnum(s[0]) || !lower_alnum(s[n - 1]))
		return 0;
	for (size_t i = 1; i < n; i++) {
		if (lower_alnum(s[i]))
			continue;
		size_t j = i;
		while (j < n && !lower_alnum(s[j]))
			j++;
		size_t k = j - i;
		int ok = (k == 1 && (s[i] == '.' || s[i] == '_')) ||
			 (k == 2 && s[i] == '_' && s[i + 1] == '_');
		for (size_t m = i; !ok && m < j && s[m] == '-'; m++)
			ok = m + 1 == j;
		if (!ok)
			return 0;
		i = j - 1;
	}
	return 1;
}

/* A registry: dot-separated labels of alphanumerics and inner '-', then
 * an optional :port. */
static int registry(const char *s, size_t n)
{
	const char *colon = memchr(s, ':', n);
	size_t h = colon ? (size_t)(colon - s) : n;
	if (colon) {
		if (colon + 1 == s + n)
			return 0;
		for (const char *p = colon + 1; p < s + n; p++)
			if (*p < '0' || *p > '9')
				return 0;
	}
	size_t a = 0;
	for (size_t i = 0; i <= h; i++) {
		if (i < h && s[i] != '.')
			continue;
		if (i == a || !alnum(s[a]) || !alnum(s[i - 1]))
			return 0;
		for (size_t j = a; j < i; j++)
			if (!alnum(s[j]) && s[j] != '-')
				return 0;
		a = i + 1;
	}
	return 1;
}

const char *spec_image_problem(const char *ref)
{
	size_t n = ref ? strlen(ref) : 0;
	if (!n || n > 255)
		return "1 to 255 characters";
	const char *colon = strchr(ref, ':'), *slash = strchr(ref, '/');
	if (colon && (!slash || colon < slash))
		for (size_t i = 0; i < sizeof image_transports / sizeof image_transports[0]; i++)
			if (strlen(image_transports[i]) == (size_t)(colon - ref) &&
			    !strncmp(ref, image_transports[i], (size_t)(colon - ref)))
				return "an image in the engine's store, not a transport "
				       "(load an archive with podman load first)";
	/* @digest: algorithm (components joined by + . _ -), ':', hex */
	const char *at = strchr(ref, '@');
	size_t name_end = at ? (size_t)(at - ref) : n;
	if (at) {
		const char *d = at + 1, *dc = strchr(d, ':');
		if (!dc || dc == d)
			return "@algorithm:hex after the name";
		for (const char *p = d; p < dc; p++)
			if (!lower_alnum(*p) && !((*p == '+' || *p == '.' || *p == '_' || *p == '-') &&
						  p > d && p + 1 < dc && lower_alnum(p[-1])))
				return "@algorithm:hex after the name";
		size_t hex = strlen(dc + 1);
		if (hex < 32)
			return "@algorithm:hex after the name, 32 hex digits at least";
		for (const char *p = dc + 1; *p; p++)
			if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
			      (*p >= 'A' && *p <= 'F')))
				return "@algorithm:hex after the name, hex digits only";
	}
	/* :tag after the last '/' */
	size_t last = 0;
	for (size_t i = 0; i < name_end; i++)
		if (ref[i] == '/')
			last = i + 1;
	const char *tc = memchr(ref + last, ':', name_end - last);
	if (tc) {
		size_t t = (size_t)(ref + name_end - (tc + 1));
		if (!t || t > 128 || !(alnum(tc[1]) || tc[1] == '_'))
			return "a tag of 1 to 128 letters, digits, '_', '.' and '-' after ':'";
		for (size_t i = 1; i < t; i++)
			if (!alnum(tc[1 + i]) && tc[1 + i] != '_' && tc[1 + i] != '.' && tc[1 + i] != '-')
				return "a tag of 1 to 128 letters, digits, '_', '.' and '-' after ':'";
		name_end = (size_t)(tc - ref);
	}
	/* the name: components separated by '/'; the first is a registry
	 * when there are more and it has a '.' or a ':' or is localhost */
	size_t a = 0;
	int first = 1;
	for (size_t i = 0; i <= name_end; i++) {
		if (i < name_end && ref[i] != '/')
			continue;
		const char *c = ref + a;
		size_t len = i - a;
		int is_reg = first && i < name_end &&
			     (memchr(c, '.', len) || memchr(c, ':', len) ||
			      (len == 9 && !strncmp(c, "localhost", 9)));
		if (is_reg ? !registry(c, len) : !path_component(c, len))
			return is_reg ? "a registry host[:port] before the first '/'"
				      : "lower-case letters and digits between '/', joined by '.', '_', "
					"'__' or '-'";
		first = 0;
		a = i + 1;
	}
	return NULL;
}
