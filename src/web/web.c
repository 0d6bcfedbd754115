/*
 * web.c - looking up the embedded dashboard files (web.h).  The table
 * itself is generated at build time (web_assets.c in the build folder).
 */
#include "web/web.h"

#include <string.h>

const web_asset *web_asset_find(const char *path)
{
	for (size_t i = 0; i < web_n_assets; i++)
		if (strcmp(web_assets[i].path, path) == 0)
			return &web_assets[i];
	return NULL;
}
