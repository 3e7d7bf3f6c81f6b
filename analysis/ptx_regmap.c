/*
 * The PTX parser (analysis/ptx_internal.h): register names, interned per
 * function (struct ptx_regmap).
 */
#include "analysis/ptx_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

static uint32_t hash_slice(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h ^ (h >> 15);
}

void ptx_regmap_reset(struct ptx_regmap *r)
{
	size_t i;

	r->nr = 0;
	r->nr_names = 0;
	if (r->table)
		memset(r->table, 0xff, r->size * sizeof(*r->table));
	for (i = 0; i < r->nr_prefixes; i++) {
		struct reg_prefix *p = &r->prefixes[i];
		memset(p->ids, 0xff, p->used * sizeof(*p->ids));
		p->used = 0;
	}
}

void ptx_regmap_release(struct ptx_regmap *r)
{
	size_t i;

	for (i = 0; i < r->nr_prefixes; i++)
		free(r->prefixes[i].ids);
	free(r->names);
	free(r->table);
	memset(r, 0, sizeof(*r));
}

static void ptx_regmap_rehash(struct ptx_regmap *r, size_t size)
{
	size_t i;

	free(r->table);
	r->size = size;
	r->table = xmalloc(size * sizeof(*r->table));
	memset(r->table, 0xff, size * sizeof(*r->table));
	for (i = 0; i < r->nr_names; i++) {
		size_t h = hash_slice(r->names[i].name.s, r->names[i].name.n) & (size - 1);
		while (r->table[h] >= 0)
			h = (h + 1) & (size - 1);
		r->table[h] = (int)i;
	}
}

/* The slot of "%<prefix><number>" names, or NULL when s is not of that form. */
static int *ptx_regmap_numbered(struct ptx_regmap *r, const char *s, size_t n)
{
	size_t plen = 1, i;
	unsigned long num = 0;
	struct reg_prefix *p = NULL;

	if (n < 3 || s[0] != '%')
		return NULL;
	while (plen < n && ((s[plen] >= 'a' && s[plen] <= 'z') || (s[plen] >= 'A' && s[plen] <= 'Z')))
		plen++;
	if (plen == 1 || plen - 1 > REG_PREFIX_LEN || plen == n || (s[plen] == '0' && plen + 1 < n))
		return NULL;
	for (i = plen; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return NULL;
		num = num * 10 + (unsigned long)(s[i] - '0');
		if (num >= REG_MAX_NUMBER)
			return NULL;
	}
	for (i = 0; i < r->nr_prefixes; i++) {
		if (r->prefixes[i].n == plen - 1 && !memcmp(r->prefixes[i].s, s + 1, plen - 1)) {
			p = &r->prefixes[i];
			break;
		}
	}
	if (!p) {
		if (r->nr_prefixes == REG_PREFIXES)
			return NULL;
		p = &r->prefixes[r->nr_prefixes++];
		memcpy(p->s, s + 1, plen - 1);
		p->s[plen - 1] = '\0';
		p->n = plen - 1;
	}
	if (num >= p->alloc) {
		size_t old = p->alloc, want = num + 1 > old * 2 ? num + 1 : old * 2;
		p->ids = xrealloc(p->ids, want * sizeof(*p->ids));
		memset(p->ids + old, 0xff, (want - old) * sizeof(*p->ids));
		p->alloc = want;
	}
	if (num >= p->used)
		p->used = num + 1;
	return &p->ids[num];
}

/* The id of a name already interned, or -1; interns nothing. */
int ptx_regmap_find(const struct ptx_regmap *r, const char *s, size_t n)
{
	size_t h, i;

	if (n >= 3 && s[0] == '%') {
		/* Numbered names live in the prefix arrays (see ptx_regmap_numbered). */
		for (i = 0; i < r->nr_prefixes; i++) {
			const struct reg_prefix *p = &r->prefixes[i];
			unsigned long num = 0;
			size_t k;
			if (n <= p->n + 1 || memcmp(p->s, s + 1, p->n) || s[p->n + 1] < '0' ||
			    s[p->n + 1] > '9')
				continue;
			for (k = p->n + 1; k < n && s[k] >= '0' && s[k] <= '9' && num < REG_MAX_NUMBER; k++)
				num = num * 10 + (unsigned long)(s[k] - '0');
			if (k == n && num < p->used && !(s[p->n + 1] == '0' && n > p->n + 2))
				return p->ids[num];
		}
	}
	if (!r->size)
		return -1;
	h = hash_slice(s, n) & (r->size - 1);
	while (r->table[h] >= 0) {
		const struct hashed_name *e = &r->names[r->table[h]];
		if (e->name.n == n && !memcmp(e->name.s, s, n))
			return e->id;
		h = (h + 1) & (r->size - 1);
	}
	return -1;
}

int ptx_regmap_intern(struct ptx_regmap *r, const char *s, size_t n)
{
	int *slot = ptx_regmap_numbered(r, s, n);
	size_t h;

	if (slot) {
		if (*slot < 0)
			*slot = (int)r->nr++;
		return *slot;
	}
	if ((r->nr_names + 1) * 2 > r->size)
		ptx_regmap_rehash(r, r->size ? r->size * 2 : 256);
	h = hash_slice(s, n) & (r->size - 1);
	while (r->table[h] >= 0) {
		struct hashed_name *e = &r->names[r->table[h]];
		if (e->name.n == n && !memcmp(e->name.s, s, n))
			return e->id;
		h = (h + 1) & (r->size - 1);
	}
	ALLOC_GROW(r->names, r->nr_names + 1, r->alloc_names);
	r->names[r->nr_names].name.s = s;
	r->names[r->nr_names].name.n = n;
	r->names[r->nr_names].id = (int)r->nr;
	r->table[h] = (int)r->nr_names++;
	return (int)r->nr++;
}
