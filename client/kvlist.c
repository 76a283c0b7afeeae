/*
 * kvlist.c: flattens the nested maps of hello and stats into dotted keys, so that callers
 * (the command-line tool, tests, monitoring glue) can look values up without a msgpack
 * dependency. The daemon may add fields at any time; nothing here knows their names.
 */
#include "kvlist.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nesting beyond this is not something a sane daemon sends. */
#define KV_MAX_DEPTH 8
#define KV_MAX_KEY 256

struct builder {
	vkr_kvlist *list; /* owned until returned */
	size_t cap;
};

static char *dup_n(const char *s, size_t n)
{
	char *p = malloc(n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

static vkr_kv *push(struct builder *b, const char *key)
{
	vkr_kvlist *l = b->list;
	if (l->count == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		vkr_kv *items = realloc(l->items, cap * sizeof(*items));
		if (!items)
			return NULL;
		l->items = items;
		b->cap = cap;
	}
	vkr_kv *kv = &l->items[l->count];
	memset(kv, 0, sizeof(*kv));
	kv->key = dup_n(key, strlen(key));
	if (!kv->key)
		return NULL;
	l->count++;
	return kv;
}

static bool all_strings(const msgpack_object *o)
{
	for (uint32_t i = 0; i < o->via.array.size; i++)
		if (o->via.array.ptr[i].type != MSGPACK_OBJECT_STR)
			return false;
	return true;
}

static int add(struct builder *b, const char *key, const msgpack_object *o, int depth);

static int add_children(struct builder *b, const char *prefix, const msgpack_object *o, int depth)
{
	char key[KV_MAX_KEY];
	int err;

	if (depth >= KV_MAX_DEPTH)
		return -EPROTO;
	if (o->type == MSGPACK_OBJECT_MAP) {
		for (uint32_t i = 0; i < o->via.map.size; i++) {
			const msgpack_object *k = &o->via.map.ptr[i].key;
			if (k->type != MSGPACK_OBJECT_STR)
				return -EPROTO;
			int len = snprintf(key, sizeof(key), "%s%s%.*s", prefix, *prefix ? "." : "",
			                   (int)(k->via.str.size > 200 ? 200 : k->via.str.size),
			                   k->via.str.ptr);
			if (len < 0 || (size_t)len >= sizeof(key))
				return -EPROTO;
			if ((err = add(b, key, &o->via.map.ptr[i].val, depth + 1)) < 0)
				return err;
		}
		return 0;
	}
	for (uint32_t i = 0; i < o->via.array.size; i++) {
		int len = snprintf(key, sizeof(key), "%s.%u", prefix, (unsigned)i);
		if (len < 0 || (size_t)len >= sizeof(key))
			return -EPROTO;
		if ((err = add(b, key, &o->via.array.ptr[i], depth + 1)) < 0)
			return err;
	}
	return 0;
}

static int add(struct builder *b, const char *key, const msgpack_object *o, int depth)
{
	vkr_kv *kv;

	if (o->type == MSGPACK_OBJECT_MAP ||
	    (o->type == MSGPACK_OBJECT_ARRAY && !all_strings(o)))
		return add_children(b, key, o, depth);
	if (!(kv = push(b, key)))
		return -ENOMEM;
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		kv->type = VKR_KV_NIL;
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		kv->type = VKR_KV_BOOL;
		kv->v.b = o->via.boolean;
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		kv->type = VKR_KV_UINT;
		kv->v.u = o->via.u64;
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		kv->type = VKR_KV_INT;
		kv->v.i = o->via.i64;
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		kv->type = VKR_KV_FLOAT;
		kv->v.f = o->via.f64;
		break;
	case MSGPACK_OBJECT_STR:
		kv->type = VKR_KV_STR;
		kv->v.s = dup_n(o->via.str.ptr, o->via.str.size);
		if (!kv->v.s)
			return -ENOMEM;
		break;
	case MSGPACK_OBJECT_ARRAY: { /* all strings: join them */
		size_t len = 0;
		for (uint32_t i = 0; i < o->via.array.size; i++)
			len += o->via.array.ptr[i].via.str.size + 1;
		char *s = malloc(len + 1), *p = s;
		if (!s)
			return -ENOMEM;
		for (uint32_t i = 0; i < o->via.array.size; i++) {
			const msgpack_object *e = &o->via.array.ptr[i];
			if (i)
				*p++ = ',';
			memcpy(p, e->via.str.ptr, e->via.str.size);
			p += e->via.str.size;
		}
		*p = '\0';
		kv->type = VKR_KV_STR;
		kv->v.s = s;
		break;
	}
	default: /* bin, ext: nothing a person or a monitor could read */
		kv->type = VKR_KV_NIL;
		break;
	}
	return 0;
}

int kvlist_from_object(const msgpack_object *o, vkr_kvlist **out)
{
	struct builder b = { 0 };
	int err;

	*out = NULL;
	if (o->type != MSGPACK_OBJECT_MAP)
		return -EPROTO;
	b.list = calloc(1, sizeof(*b.list));
	if (!b.list)
		return -ENOMEM;
	if ((err = add_children(&b, "", o, 0)) < 0) {
		vkr_kvlist_free(b.list);
		return err;
	}
	*out = b.list;
	return 0;
}

void vkr_kvlist_free(vkr_kvlist *list)
{
	if (!list)
		return;
	for (size_t i = 0; i < list->count; i++) {
		free((char *)list->items[i].key);
		if (list->items[i].type == VKR_KV_STR)
			free((char *)list->items[i].v.s);
	}
	free(list->items);
	free(list);
}

const vkr_kv *vkr_kvlist_find(const vkr_kvlist *list, const char *key)
{
	if (!list || !key)
		return NULL;
	for (size_t i = 0; i < list->count; i++)
		if (strcmp(list->items[i].key, key) == 0)
			return &list->items[i];
	return NULL;
}

double vkr_kvlist_number(const vkr_kvlist *list, const char *key, double def)
{
	const vkr_kv *kv = vkr_kvlist_find(list, key);
	if (!kv)
		return def;
	switch (kv->type) {
	case VKR_KV_UINT:
		return (double)kv->v.u;
	case VKR_KV_INT:
		return (double)kv->v.i;
	case VKR_KV_FLOAT:
		return kv->v.f;
	case VKR_KV_BOOL:
		return kv->v.b;
	default:
		return def;
	}
}
