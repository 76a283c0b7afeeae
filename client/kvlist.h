/* kvlist.h: decoding the maps that hello and stats return into a flat vkr_kvlist (internal). */
#ifndef VKR_CLIENT_KVLIST_H
#define VKR_CLIENT_KVLIST_H

#include <msgpack.h>

#include "vkreduce.h"

/* Flattens map o (see vkr_kvlist in vkreduce.h). Returns 0, -EPROTO when o is not a map of
 * string keys, or -ENOMEM. *out is owned by the caller. */
int kvlist_from_object(const msgpack_object *o, vkr_kvlist **out);

#endif
