/*
 * node.h - a small positioned document tree shared by the YAML and JSON
 * front ends of the spec parser.
 *
 * Both formats are read into the same tree of maps, sequences and scalars,
 * each node remembering the line and column where it starts, so that the
 * schema layer (spec_schema.c) checks one structure and reports errors as
 * FILE:LINE:COLUMN whatever the input format was.  Scalars keep their text
 * and whether they were quoted: a quoted "1e-3" is a string, a plain 1e-3 a
 * number, exactly as YAML and JSON readers expect.
 *
 * YAML is read with libyaml's event API.  JSON is first checked strictly by
 * jansson (its error carries line and column), then read by libyaml as flow
 * YAML for positions; should libyaml refuse some valid JSON (a lone UTF-16
 * surrogate escape, say), the tree is built from jansson's values instead,
 * without positions (line 0).
 */
#ifndef RELISH_SPEC_NODE_H
#define RELISH_SPEC_NODE_H

#include <stddef.h>

#include "common/err.h"

typedef enum node_kind { NODE_SCALAR, NODE_SEQ, NODE_MAP } node_kind;

typedef struct node node;

struct node {
	node_kind kind;
	int line, col;    /* 1-based; 0 when unknown */
	char *text;       /* NODE_SCALAR: owned, NUL-terminated (may hold NULs before) */
	size_t len;       /* NODE_SCALAR: length of text */
	int quoted;       /* NODE_SCALAR: 1 unless written plain */
	size_t n;         /* NODE_SEQ: items; NODE_MAP: pairs */
	size_t cap;       /* room in items (and keys) */
	node **items;     /* NODE_SEQ: items; NODE_MAP: values; owned */
	node **keys;      /* NODE_MAP: key scalars, parallel to items; owned */
};

/* Limits that keep hostile input from exhausting the stack or memory.
 * The tree of a document of len bytes holds at most
 * NODE_MAX_BYTES_BASE + NODE_MAX_BYTES_PER_BYTE * len bytes (nodes, texts,
 * item arrays; aliases expanded): a node count alone does not bound it
 * (aliases of one long scalar).  An ordinary spec's tree takes 3-10 bytes
 * per byte of text; the worst without aliases (a flow list of one-letter
 * items) about 40. */
#define NODE_MAX_DEPTH 64
#define NODE_MAX_NODES 100000
#define NODE_MAX_BYTES_BASE (1u << 20)
#define NODE_MAX_BYTES_PER_BYTE 48

/*
 * Parse YAML (json = 0) or JSON (json = 1) text of len bytes into a tree.
 * name is used in messages ("name:line:col: syntax error: ...").  On success
 * *out is the root (owned by the caller, node_free), or NULL for a document
 * with no content (empty file, only comments).  Errors: RL_EPARSE for
 * syntax, duplicate keys, non-scalar keys, aliases to unknown anchors, too
 * deep or too large documents (nodes or bytes); RL_ENOMEM.
 */
int node_parse(const char *text, size_t len, const char *name, int json,
	       node **out, rl_err *err);

void node_free(node *n);

/* Value of key in a map (NULL when absent or n is not a map). */
node *node_get(const node *map, const char *key);

/* A plain scalar spelling null: "", "~", null, Null, NULL. */
int node_is_null(const node *n);

#endif
