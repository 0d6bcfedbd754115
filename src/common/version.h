/*
 * version.h - relish's version, for `relish --version`, the API's
 * /api/v1/server and anything else that reports it.
 */
#ifndef RELISH_VERSION_H
#define RELISH_VERSION_H

#define RELISH_VERSION "0.1.0"

#endif
