/* The PTX parser (analysis/ptx_internal.h): opcode qualifiers and type widths. */
#include "analysis/ptx_internal.h"

#include <string.h>

/* Bits of a PTX type name ("f32" -> 32), 0 when q is not a type. */
int ptx_type_bits(struct slice q)
{
	const char *s = q.s;

	if (q.n < 2 || q.n > 6)
		return 0;
	switch (s[0]) {
	case 'b': case 'u': case 's': case 'f':
		if (q.n == 2 && s[1] == '8' && s[0] != 'f')
			return 8;
		if (q.n == 3) {
			if (s[1] == '1' && s[2] == '6')
				return 16;
			if (s[1] == '3' && s[2] == '2')
				return 32;
			if (s[1] == '6' && s[2] == '4')
				return 64;
			return 0;
		}
		if (SLICE_IS(q, "b128"))
			return 128;
		if (SLICE_IS(q, "bf16"))
			return 16;
		if (SLICE_IS(q, "f16x2") || SLICE_IS(q, "bf16x2"))
			return 32;
		return 0;
	case 't':
		return SLICE_IS(q, "tf32") ? 32 : 0;
	case 'e':
		if (SLICE_IS(q, "e4m3") || SLICE_IS(q, "e5m2"))
			return 8;
		if (SLICE_IS(q, "e4m3x2") || SLICE_IS(q, "e5m2x2"))
			return 16;
		return 0;
	default:
		return 0;
	}
}

void ptx_parse_quals(struct slice op, struct quals *q)
{
	const char *p = op.s, *e = op.s + op.n;
	const char *dot = memchr(p, '.', op.n);

	memset(q, 0, sizeof(*q));
	q->vec = 1;
	q->mnemonic.s = p;
	q->mnemonic.n = (size_t)((dot ? dot : e) - p);
	p = dot;
	while (p && p < e) {
		struct slice c;
		const char *next;

		p++;
		next = memchr(p, '.', (size_t)(e - p));
		c.s = p;
		c.n = (size_t)((next ? next : e) - p);
		p = next;
		if (!c.n)
			continue;
		switch (c.s[0]) {
		case 'g':
			if (SLICE_IS(c, "global"))
				q->space_global = 1;
			break;
		case 's':
			if (c.n >= 6 && !memcmp(c.s, "shared", 6))
				q->space_other = 1;
			else if (SLICE_IS(c, "sys"))
				;
			else if (!q->bits)
				q->bits = ptx_type_bits(c);
			break;
		case 'l':
			if (SLICE_IS(c, "local"))
				q->space_other = 1;
			else if (SLICE_IS(c, "lu"))
				q->cop = PTX_CACHE_OP_LU;
			break;
		case 'p':
			if (c.n >= 5 && !memcmp(c.s, "param", 5))
				q->space_param = 1;
			break;
		case 'c':
			if (SLICE_IS(c, "const"))
				q->space_other = 1;
			else if (SLICE_IS(c, "ca"))
				q->cop = PTX_CACHE_OP_CA;
			else if (SLICE_IS(c, "cg"))
				q->cop = PTX_CACHE_OP_CG;
			else if (SLICE_IS(c, "cs"))
				q->cop = PTX_CACHE_OP_CS;
			else if (SLICE_IS(c, "cv"))
				q->cop = PTX_CACHE_OP_CV;
			break;
		case 'n':
			if (SLICE_IS(c, "nc"))
				q->nc = 1;
			break;
		case 'v':
			if (SLICE_IS(c, "volatile"))
				q->strong_sem = 1;
			else if (SLICE_IS(c, "v2"))
				q->vec = 2;
			else if (SLICE_IS(c, "v4"))
				q->vec = 4;
			else if (SLICE_IS(c, "v8"))
				q->vec = 8;
			break;
		case 'r':
			if (SLICE_IS(c, "relaxed"))
				q->strong_sem = 1;
			break;
		case 'a':
			if (SLICE_IS(c, "acquire"))
				q->strong_sem = 1;
			break;
		case 'm':
			if (SLICE_IS(c, "mmio"))
				q->strong_sem = 1;
			break;
		case 'w':
			if (SLICE_IS(c, "wide"))
				q->wide = 1;
			break;
		case 'L':
			if (c.n > 4 && !memcmp(c.s, "L1::", 4)) {
				struct slice l = { c.s + 4, c.n - 4 };
				if (SLICE_IS(l, "evict_normal"))
					q->l1 = PTX_L1_EVICT_NORMAL;
				else if (SLICE_IS(l, "evict_unchanged"))
					q->l1 = PTX_L1_EVICT_UNCHANGED;
				else if (SLICE_IS(l, "evict_first"))
					q->l1 = PTX_L1_EVICT_FIRST;
				else if (SLICE_IS(l, "evict_last"))
					q->l1 = PTX_L1_EVICT_LAST;
				else if (SLICE_IS(l, "no_allocate"))
					q->l1 = PTX_L1_NO_ALLOCATE;
			} else if (c.n > 4 && !memcmp(c.s, "L2::", 4)) {
				q->l2 = 1;
			}
			break;
		default:
			if (!q->bits)
				q->bits = ptx_type_bits(c);
		}
	}
}
