/*
 * node.c - builds the positioned document tree of node.h from YAML (libyaml
 * events) or JSON (jansson for strict syntax, then libyaml for positions).
 *
 * The event API is used rather than libyaml's document API because events
 * carry the marks we need and let us stop at the first duplicate key with
 * the position of both occurrences.  Aliases are expanded by copying the
 * anchored node, under a node budget and a byte budget (node.h) so that
 * "billion laughs" input fails cleanly instead of exhausting memory: a
 * node count alone let a few aliases of one long scalar (a 108 KB spec)
 * make 204 MB.  Every byte the tree holds (nodes, texts, item arrays) is
 * counted as it is allocated.
 */
#include "spec/node.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

void node_free(node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		node_free(n->items[i]);
		if (n->keys)
			node_free(n->keys[i]);
	}
	free(n->items);
	free(n->keys);
	free(n->text);
	free(n);
}

node *node_get(const node *map, const char *key)
{
	if (!map || map->kind != NODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->keys[i]->text, key))
			return map->items[i];
	return NULL;
}

int node_is_null(const node *n)
{
	if (!n || n->kind != NODE_SCALAR || n->quoted)
		return 0;
	static const char *const nulls[] = {"", "~", "null", "Null", "NULL"};
	for (size_t i = 0; i < sizeof nulls / sizeof nulls[0]; i++)
		if (!strcmp(n->text, nulls[i]))
			return 1;
	return 0;
}

/* ---- building ---------------------------------------------------------- */

typedef struct anchor {
	char *name;
	node *target; /* borrowed: owned by the tree */
} anchor;

typedef struct frame {
	node *n;
	node *pending_key; /* maps: key read, value not yet */
} frame;

typedef struct builder {
	const char *name;
	rl_err *err;
	node *root;
	frame stack[NODE_MAX_DEPTH + 1];
	int depth;
	anchor *anchors;
	size_t n_anchors;
	size_t n_nodes;
	size_t bytes, max_bytes;   /* held by the tree; its budget (0: none yet) */
	int line, col;             /* where the node being made starts */
} builder;

static size_t budget_for(size_t len)
{
	return NODE_MAX_BYTES_BASE + NODE_MAX_BYTES_PER_BYTE * len;
}

/* Count n more bytes of the tree against the budget: 0, or RL_EPARSE. */
static int take(builder *b, size_t n)
{
	b->bytes += n;
	if (b->bytes <= b->max_bytes)
		return 0;
	return rl_err_set(b->err, RL_EPARSE,
			  "%s:%d:%d: document too large once its aliases are expanded (more than "
			  "%zu bytes)", b->name, b->line, b->col, b->max_bytes);
}

static node *node_new(builder *b, node_kind kind, int line, int col)
{
	if (++b->n_nodes > NODE_MAX_NODES) {
		rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: document too large (more than %d nodes)",
			   b->name, line, col, NODE_MAX_NODES);
		return NULL;
	}
	b->line = line;
	b->col = col;
	if (take(b, sizeof(node)) < 0)
		return NULL;
	node *n = calloc(1, sizeof *n);
	if (!n) {
		rl_err_set(b->err, RL_ENOMEM, "%s: out of memory reading the document", b->name);
		return NULL;
	}
	n->kind = kind;
	n->line = line;
	n->col = col;
	return n;
}

static node *scalar_new(builder *b, const char *text, size_t len, int quoted, int line, int col)
{
	node *n = node_new(b, NODE_SCALAR, line, col);
	if (!n)
		return NULL;
	if (take(b, len + 1) < 0) {
		free(n);
		return NULL;
	}
	n->text = malloc(len + 1);
	if (!n->text) {
		free(n);
		rl_err_set(b->err, RL_ENOMEM, "%s: out of memory reading the document", b->name);
		return NULL;
	}
	memcpy(n->text, text, len);
	n->text[len] = '\0';
	n->len = len;
	n->quoted = quoted;
	return n;
}

/* Append child (and key, for maps) to parent; takes ownership on success.
 * The arrays grow by doubling: a list of n items costs O(n) copies, not
 * O(n^2) (a 60 KB flow list of one-letter items made 3.6 GB of copies
 * growing one item at a time). */
static int node_append(builder *b, node *parent, node *key, node *child)
{
	if (parent->n == parent->cap) {
		size_t cap = parent->cap ? 2 * parent->cap : 4;
		size_t per = parent->kind == NODE_MAP ? 2 : 1;
		int rc = take(b, (cap - parent->cap) * per * sizeof(node *));
		if (rc < 0)
			return rc;
		node **items = realloc(parent->items, cap * sizeof *items);
		if (!items)
			return rl_err_set(b->err, RL_ENOMEM, "%s: out of memory", b->name);
		parent->items = items;
		if (parent->kind == NODE_MAP) {
			node **keys = realloc(parent->keys, cap * sizeof *keys);
			if (!keys)
				return rl_err_set(b->err, RL_ENOMEM, "%s: out of memory", b->name);
			parent->keys = keys;
		}
		parent->cap = cap;
	}
	if (parent->kind == NODE_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = child;
	return 0;
}

static node *node_copy(builder *b, const node *src, int line, int col, int depth)
{
	if (depth > NODE_MAX_DEPTH) {
		rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: document nested too deeply (more than %d levels)",
			   b->name, line, col, NODE_MAX_DEPTH);
		return NULL;
	}
	node *n = src->kind == NODE_SCALAR
			  ? scalar_new(b, src->text, src->len, src->quoted, line, col)
			  : node_new(b, src->kind, line, col);
	if (!n || src->kind == NODE_SCALAR)
		return n;
	for (size_t i = 0; i < src->n; i++) {
		node *k = NULL, *v = node_copy(b, src->items[i], line, col, depth + 1);
		if (v && src->kind == NODE_MAP)
			k = node_copy(b, src->keys[i], line, col, depth + 1);
		if (!v || (src->kind == NODE_MAP && !k) || node_append(b, n, k, v) < 0) {
			node_free(k);
			node_free(v);
			node_free(n);
			return NULL;
		}
	}
	return n;
}

/* Dotted path of key `last` in the innermost open map, for messages: every
 * open container is already the last entry of its parent. */
static void key_path(const builder *b, const char *last, char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (int i = 1; i < b->depth && used < len; i++) {
		const node *parent = b->stack[i - 1].n;
		int w = parent->kind == NODE_MAP
				? snprintf(buf + used, len - used, "%s%s", used ? "." : "", parent->keys[parent->n - 1]->text)
				: snprintf(buf + used, len - used, "[%zu]", parent->n - 1);
		if (w < 0)
			return;
		used += (size_t)w;
	}
	if (used < len)
		snprintf(buf + used, len - used, "%s%s", used ? "." : "", last);
}

/*
 * Place a finished (or just opened) node in its parent.  Takes ownership of
 * n in every case (freed on error).
 */
static int attach(builder *b, node *n)
{
	if (b->depth == 0) {
		b->root = n;
		return 0;
	}
	frame *f = &b->stack[b->depth - 1];
	if (f->n->kind == NODE_SEQ) {
		if (node_append(b, f->n, NULL, n) < 0) {
			node_free(n);
			return b->err ? b->err->code : RL_ENOMEM;
		}
		return 0;
	}
	if (!f->pending_key) {
		if (n->kind != NODE_SCALAR) {
			int line = n->line, col = n->col;
			const char *what = n->kind == NODE_MAP ? "map" : "list";
			node_free(n);
			return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: expected a key (a string), got a %s",
					  b->name, line, col, what);
		}
		node *prev = NULL;
		for (size_t i = 0; i < f->n->n && !prev; i++)
			if (f->n->keys[i]->len == n->len && !memcmp(f->n->keys[i]->text, n->text, n->len))
				prev = f->n->keys[i];
		if (prev) {
			char path[256];
			key_path(b, n->text, path, sizeof path);
			int rc = rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: %s: duplicate key (first at %d:%d)",
					    b->name, n->line, n->col, path, prev->line, prev->col);
			node_free(n);
			return rc;
		}
		f->pending_key = n;
		return 0;
	}
	if (node_append(b, f->n, f->pending_key, n) < 0) {
		node_free(n);
		return b->err ? b->err->code : RL_ENOMEM;
	}
	f->pending_key = NULL;
	return 0;
}

static int remember_anchor(builder *b, const yaml_char_t *name, node *n)
{
	if (!name)
		return 0;
	anchor *a = realloc(b->anchors, (b->n_anchors + 1) * sizeof *a);
	if (!a)
		return rl_err_set(b->err, RL_ENOMEM, "%s: out of memory", b->name);
	b->anchors = a;
	a[b->n_anchors].name = strdup((const char *)name);
	if (!a[b->n_anchors].name)
		return rl_err_set(b->err, RL_ENOMEM, "%s: out of memory", b->name);
	a[b->n_anchors++].target = n;
	return 0;
}

static int open_container(builder *b, node_kind kind, const yaml_mark_t *m, const yaml_char_t *anc)
{
	int line = (int)m->line + 1, col = (int)m->column + 1;
	if (b->depth >= NODE_MAX_DEPTH)
		return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: document nested too deeply (more than %d levels)",
				  b->name, line, col, NODE_MAX_DEPTH);
	if (b->depth > 0 && b->stack[b->depth - 1].n->kind == NODE_MAP &&
	    !b->stack[b->depth - 1].pending_key)
		return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: expected a key (a string), got a %s",
				  b->name, line, col, kind == NODE_MAP ? "map" : "list");
	node *n = node_new(b, kind, line, col);
	if (!n)
		return b->err ? b->err->code : RL_ENOMEM;
	int rc = attach(b, n);
	if (rc < 0)
		return rc;
	b->stack[b->depth].n = n;
	b->stack[b->depth].pending_key = NULL;
	b->depth++;
	return remember_anchor(b, anc, n);
}

static void offset_to_linecol(const char *text, size_t len, size_t off, int *line, int *col)
{
	*line = 1;
	*col = 1;
	for (size_t i = 0; i < off && i < len; i++) {
		if (text[i] == '\n') {
			(*line)++;
			*col = 1;
		} else {
			(*col)++;
		}
	}
}

static int syntax_error(builder *b, const yaml_parser_t *p, const char *text, size_t len)
{
	const char *problem = p->problem ? p->problem : "malformed document";
	if (p->error == YAML_READER_ERROR) {
		int line, col;
		offset_to_linecol(text, len, p->problem_offset, &line, &col);
		return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: syntax error: %s", b->name, line, col, problem);
	}
	if (p->context)
		return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: syntax error: %s (%s at %d:%d)", b->name,
				  (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1, problem,
				  p->context, (int)p->context_mark.line + 1, (int)p->context_mark.column + 1);
	return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: syntax error: %s", b->name,
			  (int)p->problem_mark.line + 1, (int)p->problem_mark.column + 1, problem);
}

static int handle_event(builder *b, yaml_event_t *ev, int *docs, int *done)
{
	const yaml_mark_t *m = &ev->start_mark;
	int line = (int)m->line + 1, col = (int)m->column + 1;
	switch (ev->type) {
	case YAML_DOCUMENT_START_EVENT:
		if (++*docs > 1)
			return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: expected one document, found a second",
					  b->name, line, col);
		return 0;
	case YAML_SCALAR_EVENT: {
		const char *tag = (const char *)ev->data.scalar.tag;
		int quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE ||
			     (tag && !strcmp(tag, YAML_STR_TAG));
		node *n = scalar_new(b, (const char *)ev->data.scalar.value, ev->data.scalar.length,
				     quoted, line, col);
		if (!n)
			return b->err ? b->err->code : RL_ENOMEM;
		int rc = attach(b, n);
		if (rc < 0)
			return rc;
		return remember_anchor(b, ev->data.scalar.anchor, n);
	}
	case YAML_SEQUENCE_START_EVENT:
		return open_container(b, NODE_SEQ, m, ev->data.sequence_start.anchor);
	case YAML_MAPPING_START_EVENT:
		return open_container(b, NODE_MAP, m, ev->data.mapping_start.anchor);
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		if (b->depth > 0)
			b->depth--;
		return 0;
	case YAML_ALIAS_EVENT: {
		const char *name = (const char *)ev->data.alias.anchor;
		for (size_t i = b->n_anchors; i-- > 0;) {
			if (strcmp(b->anchors[i].name, name))
				continue;
			node *n = node_copy(b, b->anchors[i].target, line, col, b->depth);
			if (!n)
				return b->err ? b->err->code : RL_ENOMEM;
			return attach(b, n);
		}
		return rl_err_set(b->err, RL_EPARSE, "%s:%d:%d: alias *%s names no anchor", b->name, line,
				  col, name);
	}
	case YAML_STREAM_END_EVENT:
		*done = 1;
		return 0;
	default:
		return 0;
	}
}

static int parse_yaml(const char *text, size_t len, const char *name, node **out, rl_err *err)
{
	builder b;
	memset(&b, 0, sizeof b);
	b.name = name;
	b.err = err;
	b.max_bytes = budget_for(len);
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return rl_err_set(err, RL_ENOMEM, "%s: cannot start the YAML parser", name);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	int rc = 0, done = 0, docs = 0;
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = syntax_error(&b, &p, text, len);
			break;
		}
		rc = handle_event(&b, &ev, &docs, &done);
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	/* Nodes are owned by the tree as soon as they are attached; a key read
	 * without its value belongs to no one yet. */
	for (int i = 0; i < b.depth; i++)
		node_free(b.stack[i].pending_key);
	for (size_t i = 0; i < b.n_anchors; i++)
		free(b.anchors[i].name);
	free(b.anchors);
	if (rc < 0) {
		node_free(b.root);
		return rc;
	}
	*out = b.root;
	return 0;
}

/* ---- JSON -------------------------------------------------------------- */

/* Tree from jansson's values, for the rare valid JSON libyaml refuses. */
static node *from_json(builder *b, json_t *j, int depth)
{
	if (depth > NODE_MAX_DEPTH) {
		rl_err_set(b->err, RL_EPARSE, "%s: document nested too deeply (more than %d levels)",
			   b->name, NODE_MAX_DEPTH);
		return NULL;
	}
	char buf[64];
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		node *n = node_new(b, NODE_MAP, 0, 0);
		const char *k;
		json_t *v;
		json_object_foreach(j, k, v) {
			if (!n)
				break;
			node *kn = scalar_new(b, k, strlen(k), 1, 0, 0);
			node *vn = kn ? from_json(b, v, depth + 1) : NULL;
			if (!vn || node_append(b, n, kn, vn) < 0) {
				node_free(kn);
				node_free(vn);
				node_free(n);
				return NULL;
			}
		}
		return n;
	}
	case JSON_ARRAY: {
		node *n = node_new(b, NODE_SEQ, 0, 0);
		size_t i;
		json_t *v;
		json_array_foreach(j, i, v) {
			if (!n)
				break;
			node *vn = from_json(b, v, depth + 1);
			if (!vn || node_append(b, n, NULL, vn) < 0) {
				node_free(vn);
				node_free(n);
				return NULL;
			}
		}
		return n;
	}
	case JSON_STRING:
		return scalar_new(b, json_string_value(j), json_string_length(j), 1, 0, 0);
	case JSON_INTEGER:
		snprintf(buf, sizeof buf, "%lld", (long long)json_integer_value(j));
		return scalar_new(b, buf, strlen(buf), 0, 0, 0);
	case JSON_REAL:
		snprintf(buf, sizeof buf, "%.17g", json_real_value(j));
		return scalar_new(b, buf, strlen(buf), 0, 0, 0);
	case JSON_TRUE:
		return scalar_new(b, "true", 4, 0, 0, 0);
	case JSON_FALSE:
		return scalar_new(b, "false", 5, 0, 0, 0);
	default:
		return scalar_new(b, "null", 4, 0, 0, 0);
	}
}

static int parse_json(const char *text, size_t len, const char *name, node **out, rl_err *err)
{
	json_error_t jerr;
	json_t *j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j) {
		if (jerr.line < 1)
			return rl_err_set(err, RL_EPARSE, "%s:1:1: syntax error: %s", name, jerr.text);
		return rl_err_set(err, RL_EPARSE, "%s:%d:%d: syntax error: %s", name, jerr.line,
				  jerr.column < 1 ? 1 : jerr.column, jerr.text);
	}
	node *root = NULL;
	rl_err scratch;
	rl_err_clear(&scratch);
	int rc = parse_yaml(text, len, name, &root, &scratch);
	if (rc < 0 || !root) {
		builder b;
		memset(&b, 0, sizeof b);
		b.name = name;
		b.err = err;
		b.max_bytes = budget_for(len);
		node_free(root);
		root = from_json(&b, j, 0);
		if (!root) {
			json_decref(j);
			return err && err->code ? err->code : RL_ENOMEM;
		}
	}
	json_decref(j);
	*out = root;
	return 0;
}

int node_parse(const char *text, size_t len, const char *name, int json, node **out, rl_err *err)
{
	node *root = NULL;
	int rc = json ? parse_json(text, len, name, &root, err) : parse_yaml(text, len, name, &root, err);
	if (rc < 0)
		return rc;
	*out = root;
	return 0;
}
