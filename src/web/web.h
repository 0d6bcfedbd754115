/*
 * web.h - the dashboard's files (HTML, ES modules, CSS, uPlot), embedded
 * in the relish binary at build time so that `relish serve` needs neither
 * Node nor a network to show them (docs/dashboard.md).
 *
 * The build (CMakeLists.txt, RELISH_WEB) installs web/package-lock.json's
 * packages with npm, then relish-web-embed (web_embed_main.c) writes every
 * file of web/src and the few of node_modules the page loads into one
 * generated C file of byte arrays: web_assets[] below.  A build without
 * the dashboard (RELISH_WEB=OFF, or no npm) has no assets, and the service
 * answers its pages with a short page saying how to build them.
 */
#ifndef RELISH_WEB_H
#define RELISH_WEB_H

#include <stddef.h>

typedef struct web_asset {
	const char *path;          /* "index.html", "experiment.js", "uPlot.iife.min.js" */
	const char *content_type;  /* "text/javascript; charset=utf-8" */
	const unsigned char *data; /* len bytes, NUL after them */
	size_t len;
} web_asset;

extern const web_asset web_assets[];
extern const size_t web_n_assets;

/* The asset at path (no leading slash), or NULL. */
const web_asset *web_asset_find(const char *path);

/* Content type from a file name's extension ("application/octet-stream"
 * when unknown). */
const char *web_content_type(const char *name);

#endif
