/*
 * web_type.c - a dashboard file's content type from its name (web.h); on
 * its own so that the build-time tool relish-web-embed links it alone.
 */
#include "web/web.h"

#include <string.h>

const char *web_content_type(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{".html", "text/html; charset=utf-8"},
		{".js", "text/javascript; charset=utf-8"},
		{".mjs", "text/javascript; charset=utf-8"},
		{".css", "text/css; charset=utf-8"},
		{".svg", "image/svg+xml"},
		{".png", "image/png"},
		{".json", "application/json"},
		{".txt", "text/plain; charset=utf-8"},
	};
	const char *dot = strrchr(name, '.');
	for (size_t i = 0; dot && i < sizeof types / sizeof types[0]; i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return "application/octet-stream";
}
