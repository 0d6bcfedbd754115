/*
 * grow.h - growing the struct-of-arrays tables of the samplers (tpe.c,
 * tpe_joint.c, gp.c): each array is realloc'd to a new capacity one by
 * one.  Private to src/search.
 *
 * SEARCH_GROW(ptr, count) reallocs ptr to count elements of its type and
 * makes the enclosing function return RL_ENOMEM when that fails; ptr
 * keeps its old block then, so the caller's destructor still frees it and
 * the table's recorded capacity must only be raised after every array
 * grew.
 */
#ifndef RELISH_SEARCH_GROW_H
#define RELISH_SEARCH_GROW_H

#include <stdlib.h>

#include "common/err.h"

#define SEARCH_GROW(ptr, count)                                                \
	do {                                                                   \
		void *np_ = realloc((ptr), (count) * sizeof *(ptr));           \
		if (!np_)                                                      \
			return RL_ENOMEM;                                      \
		(ptr) = np_;                                                   \
	} while (0)

#endif
