/* openpgp-scan.c - what OpenPGP data holds, read before gpg sees it
 * (see openpgp-scan.h) */
#include "autoconfig.h"

#include <string.h>

#include "openpgp-scan.h"

/* One packet header at p (of n bytes left): its tag and where its body
 * starts and ends.  Partial body lengths (RFC 9580 4.2.1.4) are followed
 * to the last part.  FALSE when the header or a length does not fit. */
typedef struct {
	guint tag;
	gsize body;		/* offset of the body (first part) */
	gsize end;		/* offset after the packet */
	gboolean partial;	/* the body is in parts */
} packet_head;

static gboolean
new_length(const guint8 *p, gsize n, gsize *at, gsize *len, gboolean *partial)
{
	guint8 o1;

	*partial = FALSE;
	if (*at >= n)
		return FALSE;
	o1 = p[(*at)++];
	if (o1 < 192) {
		*len = o1;
	} else if (o1 < 224) {
		if (*at >= n)
			return FALSE;
		*len = ((gsize) (o1 - 192) << 8) + p[(*at)++] + 192;
	} else if (o1 == 255) {
		if (n - *at < 4)
			return FALSE;
		*len = ((gsize) p[*at] << 24) | ((gsize) p[*at + 1] << 16) | ((gsize) p[*at + 2] << 8) | p[*at + 3];
		*at += 4;
	} else {
		*len = (gsize) 1 << (o1 & 0x1f);
		*partial = TRUE;
	}
	return TRUE;
}

static gboolean
packet_read(const guint8 *p, gsize n, gsize at, packet_head *h)
{
	guint8 b;
	gsize len = 0;

	if (at >= n)
		return FALSE;
	b = p[at++];
	if (!(b & 0x80))
		return FALSE;
	h->partial = FALSE;
	if (b & 0x40) {
		gboolean partial;

		h->tag = b & 0x3f;
		if (!new_length(p, n, &at, &len, &partial))
			return FALSE;
		h->body = at;
		while (partial) {
			/* a part, then the next length; the last one is not partial */
			h->partial = TRUE;
			if (n - at < len)
				return FALSE;
			at += len;
			if (!new_length(p, n, &at, &len, &partial))
				return FALSE;
		}
	} else {
		guint ltype = b & 3;
		static const guint sizes[] = { 1, 2, 4, 0 };

		h->tag = (b >> 2) & 0x0f;
		if (ltype == 3) {
			len = n - at;	/* indeterminate: to the end */
		} else {
			if (n - at < sizes[ltype])
				return FALSE;
			for (guint i = 0; i < sizes[ltype]; i++)
				len = (len << 8) | p[at + i];
			at += sizes[ltype];
		}
		h->body = at;
	}
	if (n - at < len)
		return FALSE;
	h->end = at + len;
	return TRUE;
}

/* --- armor ----------------------------------------------------------------- */

static const char *
line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (gsize) (end - p));

	return nl != NULL ? nl : end;
}

static gboolean
line_is(const char *p, const char *e, const char *prefix)
{
	gsize n = strlen(prefix);

	return (gsize) (e - p) >= n && memcmp(p, prefix, n) == 0;
}

/* Decode the base64 lines of one armored block starting after its BEGIN
 * line at p, up to its END line (or until out holds max_len bytes); the
 * position after the block. */
static const char *
dearmor_block(const char *p, const char *end, GByteArray *out, gsize max_len)
{
	gint state = 0;
	guint save = 0;
	gboolean in_headers = TRUE;
	guint8 buf[1024];

	while (p < end) {
		const char *e = line_end(p, end);
		const char *t = e;

		while (t > p && (t[-1] == '\r' || t[-1] == ' ' || t[-1] == '\t'))
			t--;
		if (line_is(p, t, "-----END PGP "))
			return e < end ? e + 1 : end;
		if (in_headers) {
			/* armor headers end at the first empty line; a block
			 * without any starts with data at once */
			if (t == p || memchr(p, ':', (gsize) (t - p)) == NULL)
				in_headers = FALSE;
			if (t == p) {
				p = e < end ? e + 1 : end;
				continue;
			}
		}
		if (!in_headers && t > p && *p != '=') {
			for (const char *q = p; q < t; q += sizeof buf / 4 * 3) {
				gsize chunk = MIN((gsize) (t - q), sizeof buf / 4 * 3);
				gsize n = g_base64_decode_step(q, chunk, buf, &state, &save);

				g_byte_array_append(out, buf, (guint) MIN(n, max_len - out->len));
				if (out->len >= max_len)
					return end;	/* the head is all that is wanted */
			}
		}
		p = e < end ? e + 1 : end;
	}
	return end;
}

GBytes *
openpgp_binary(const void *data, gsize len, gsize max_len)
{
	const char *p = data, *end = p + len;
	g_autoptr(GByteArray) out = g_byte_array_new();
	gboolean any = FALSE;

	if (len > 0 && (p[0] & 0x80))
		return g_bytes_new(data, MIN(len, max_len));
	while (p < end) {
		const char *e = line_end(p, end);

		if (line_is(p, e, "-----BEGIN PGP ") && !line_is(p, e, "-----BEGIN PGP SIGNED MESSAGE")) {
			p = dearmor_block(e < end ? e + 1 : end, end, out, max_len);
			any = TRUE;
			continue;
		}
		p = e < end ? e + 1 : end;
	}
	return any ? g_byte_array_free_to_bytes(g_steal_pointer(&out)) : NULL;
}

gboolean
openpgp_scan_data(const void *data, gsize len, guint max_packets, openpgp_scan *out)
{
	g_autoptr(GBytes) bin = NULL;
	const guint8 *p;
	gsize n, at = 0;

	memset(out, 0, sizeof *out);
	/* armor is three quarters data: the binary is never longer */
	bin = openpgp_binary(data, len, len);
	if (bin == NULL)
		return FALSE;
	out->armored = len == 0 || !(((const guint8 *) data)[0] & 0x80);
	p = g_bytes_get_data(bin, &n);
	while (at < n) {
		packet_head h;

		if (out->packets >= max_packets) {
			out->too_many = TRUE;
			break;
		}
		if (!packet_read(p, n, at, &h)) {
			out->malformed = TRUE;
			break;
		}
		out->packets++;
		out->tags[h.tag]++;
		at = h.end;
	}
	return out->packets > 0 || out->malformed;
}

gboolean
openpgp_scan_encrypted(const void *data, gsize len, guint max_packets, openpgp_scan *out)
{
	const guint8 *p = data;
	gsize at = 0;

	memset(out, 0, sizeof *out);
	while (at < len) {
		packet_head h;
		guint8 b = p[at];
		guint tag = (b & 0x40) ? (b & 0x3f) : ((b >> 2) & 0x0f);

		if (!(b & 0x80))
			return FALSE;
		if (tag == OPENPGP_TAG_SEIPD || tag == OPENPGP_TAG_AEAD || tag == OPENPGP_TAG_SED) {
			out->packets++;
			out->tags[tag]++;
			return TRUE;	/* its body is the rest */
		}
		if (out->packets >= max_packets) {
			out->too_many = TRUE;
			return TRUE;
		}
		if (!packet_read(p, len, at, &h)) {
			out->malformed = TRUE;
			return FALSE;
		}
		out->packets++;
		out->tags[h.tag]++;
		at = h.end;
	}
	return FALSE;
}

/* --- keys -------------------------------------------------------------------- */

void
openpgp_block_key_free(openpgp_block_key *k)
{
	if (k == NULL)
		return;
	g_ptr_array_unref(k->subkeys);
	g_ptr_array_unref(k->uids);
	if (k->packets != NULL)
		g_bytes_unref(k->packets);
	g_free(k);
}

/* Version 4 fingerprint: SHA-1 of 0x99, the two-octet length and the key
 * packet's body (RFC 9580 5.5.4.2); "" for other versions. */
static void
v4_fingerprint(const guint8 *body, gsize len, char out[41])
{
	g_autoptr(GChecksum) c = NULL;
	guint8 head[3] = { 0x99, (guint8) (len >> 8), (guint8) len };
	guint8 digest[20];
	gsize dlen = sizeof digest;

	out[0] = '\0';
	if (len < 1 || body[0] != 4 || len > 0xffff)
		return;
	c = g_checksum_new(G_CHECKSUM_SHA1);
	g_checksum_update(c, head, sizeof head);
	g_checksum_update(c, body, len);
	g_checksum_get_digest(c, digest, &dlen);
	for (gsize i = 0; i < dlen; i++)
		g_snprintf(out + 2 * i, 3, "%02X", digest[i]);
}

static void
key_finish(openpgp_block_key *k, const guint8 *p, gsize start, gsize end, GPtrArray *keys)
{
	k->packets = g_bytes_new(p + start, end - start);
	g_ptr_array_add(keys, k);
}

GPtrArray *
openpgp_block_keys(GBytes *binary, guint max_keys)
{
	g_autoptr(GPtrArray) keys = g_ptr_array_new_with_free_func((GDestroyNotify) openpgp_block_key_free);
	openpgp_block_key *k = NULL;
	gsize n, at = 0, start = 0;
	const guint8 *p = g_bytes_get_data(binary, &n);

	while (at < n) {
		packet_head h;

		if (!packet_read(p, n, at, &h) || h.partial)
			goto bad;	/* keys are never in parts */
		if (h.tag == OPENPGP_TAG_PUBLIC_KEY || h.tag == OPENPGP_TAG_SECRET_KEY) {
			if (k != NULL)
				key_finish(k, p, start, at, keys);
			k = NULL;
			if (keys->len >= max_keys)
				goto bad;
			k = g_new0(openpgp_block_key, 1);
			k->subkeys = g_ptr_array_new_with_free_func(g_free);
			k->uids = g_ptr_array_new_with_free_func(g_free);
			start = at;
			/* a secret key's fingerprint covers only its public
			 * part: such keys are refused, not identified */
			if (h.tag == OPENPGP_TAG_PUBLIC_KEY)
				v4_fingerprint(p + h.body, h.end - h.body, k->fpr);
			k->secret = h.tag == OPENPGP_TAG_SECRET_KEY;
		} else if (k == NULL) {
			if (h.tag != OPENPGP_TAG_MARKER)
				goto bad;
		} else if (h.tag == OPENPGP_TAG_PUBLIC_SUBKEY || h.tag == OPENPGP_TAG_SECRET_SUBKEY) {
			char fpr[41] = "";

			if (h.tag == OPENPGP_TAG_PUBLIC_SUBKEY)
				v4_fingerprint(p + h.body, h.end - h.body, fpr);
			if (fpr[0] != '\0')
				g_ptr_array_add(k->subkeys, g_strdup(fpr));
			k->secret |= h.tag == OPENPGP_TAG_SECRET_SUBKEY;
		} else if (h.tag == OPENPGP_TAG_USER_ID) {
			g_ptr_array_add(k->uids, g_utf8_make_valid((const char *) p + h.body,
								   (gssize) (h.end - h.body)));
		}
		at = h.end;
	}
	if (k != NULL)
		key_finish(k, p, start, n, keys);
	return g_steal_pointer(&keys);
bad:
	openpgp_block_key_free(k);
	return NULL;
}

/* Whether fingerprint f is id: the same 40 digits, or a key ID of 16
 * that ends it. */
static gboolean
fpr_is(const char *f, const char *id)
{
	gsize n = strlen(id), fn = strlen(f);

	if (fn != 40 || (n != 40 && n != 16))
		return FALSE;
	return g_ascii_strcasecmp(f + fn - n, id) == 0;
}

const openpgp_block_key *
openpgp_block_find(GPtrArray *keys, const char *fpr)
{
	for (guint i = 0; keys != NULL && i < keys->len; i++) {
		const openpgp_block_key *k = g_ptr_array_index(keys, i);

		if (fpr_is(k->fpr, fpr))
			return k;
		for (guint j = 0; j < k->subkeys->len; j++)
			if (fpr_is(g_ptr_array_index(k->subkeys, j), fpr))
				return k;
	}
	return NULL;
}

char *
openpgp_uid_email(const char *uid)
{
	const char *open = strrchr(uid, '<');
	const char *close = open != NULL ? strchr(open, '>') : NULL;
	g_autofree char *addr = NULL;

	if (open != NULL && close != NULL)
		addr = g_strndup(open + 1, (gsize) (close - open - 1));
	else
		addr = g_strstrip(g_strdup(uid));
	if (*addr == '\0' || strchr(addr, '@') == NULL || strpbrk(addr, " \t<>") != NULL)
		return NULL;
	return g_ascii_strdown(addr, -1);
}
