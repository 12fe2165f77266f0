/* crypto-sign.c - signing and encrypting: PGP/MIME, cleartext, detached, through gpg-agent or a gpg process */
#include "autoconfig.h"

#include <errno.h>
#include <stdlib.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gpgme.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "crypto.h"
#include "gmime-autoptr.h"
#include "gpgrun.h"
#include "openpgp.h"

#include "crypto-private.h"

static vulnid_status sign_data(GBytes *data, const char *signer, GBytes **out, char **micalg,
				GError **err);

/* Parts that are not base64 already go quoted-printable: nothing in the
 * signed content may be changed by a 7-bit relay (RFC 3156, section 3). */
static void
sign_prepare(GMimeObject *o)
{
	if (GMIME_IS_MULTIPART_SIGNED(o) || GMIME_IS_MULTIPART_ENCRYPTED(o))
		return;
	if (GMIME_IS_MULTIPART(o)) {
		int n = g_mime_multipart_get_count(GMIME_MULTIPART(o));

		for (int i = 0; i < n; i++)
			sign_prepare(g_mime_multipart_get_part(GMIME_MULTIPART(o), i));
	} else if (GMIME_IS_MESSAGE_PART(o)) {
		GMimeMessage *m = g_mime_message_part_get_message(GMIME_MESSAGE_PART(o));

		if (m != NULL && g_mime_message_get_mime_part(m) != NULL)
			sign_prepare(g_mime_message_get_mime_part(m));
	} else if (GMIME_IS_PART(o) &&
		   g_mime_part_get_content_encoding(GMIME_PART(o)) != GMIME_CONTENT_ENCODING_BASE64)
		g_mime_part_set_content_encoding(GMIME_PART(o), GMIME_CONTENT_ENCODING_QUOTEDPRINTABLE);
}

/* RFC 3156 multipart/signed, as g_mime_multipart_signed_sign() builds it,
 * but signed through sign_data(): GMime's context runs gpg and lists the
 * signer's secret key first, two gpg processes per mail. */
GMimeObject *
crypto_sign_mime(GMimeObject *entity, const char *signer, GError **err)
{
	g_autoptr(GMimeStream) clear = g_mime_stream_mem_new();
	g_autoptr(GMimeStream) canon = g_mime_stream_mem_new();
	g_autoptr(GBytes) sig = NULL;
	g_autofree char *micalg = NULL;
	GMimeStream *f;
	GMimeFilter *filter;
	GByteArray *buf;
	g_autoptr(GMimeParser) parser = NULL;
	GMimeObject *content;
	GMimePart *sigpart;
	GMimeDataWrapper *wrapper;
	GMimeMultipartSigned *mps;
	GMimeStream *sigstream;
	vulnid_status s;

	sign_prepare(entity);
	/* "From " armoured and trailing white space stripped (RFC 3156,
	 * sections 3 and 5.4) in what is sent ... */
	f = g_mime_stream_filter_new(clear);
	filter = g_mime_filter_from_new(GMIME_FILTER_FROM_MODE_ARMOR);
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), filter);
	g_object_unref(filter);
	filter = g_mime_filter_strip_new();
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), filter);
	g_object_unref(filter);
	g_mime_object_write_to_stream(entity, NULL, f);
	g_mime_stream_flush(f);
	g_object_unref(f);
	g_mime_stream_reset(clear);
	/* ... and CRLF line ends in what is signed (section 5.1) */
	f = g_mime_stream_filter_new(canon);
	filter = g_mime_filter_unix2dos_new(FALSE);
	g_mime_stream_filter_add(GMIME_STREAM_FILTER(f), filter);
	g_object_unref(filter);
	g_mime_stream_write_to_stream(clear, f);
	g_mime_stream_flush(f);
	g_object_unref(f);
	g_mime_stream_reset(clear);
	buf = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(canon));
	{
		g_autoptr(GBytes) data = g_bytes_new_static(buf->data, buf->len);
		g_autoptr(GError) e = NULL;

		s = sign_data(data, signer, &sig, &micalg, &e);
		if (s != VULNID_OK) {
			g_set_error(err, GMIME_ERROR, GMIME_ERROR_GENERAL, "%s", e != NULL ? e->message : "cannot sign");
			return NULL;
		}
	}
	parser = g_mime_parser_new_with_stream(clear);
	content = g_mime_parser_construct_part(parser, NULL);
	if (content == NULL) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_PARSE_ERROR, "cannot read back the signed part");
		return NULL;
	}
	sigpart = g_mime_part_new_with_type("application", "pgp-signature");
	sigstream = g_mime_stream_mem_new_with_buffer(g_bytes_get_data(sig, NULL), g_bytes_get_size(sig));
	wrapper = g_mime_data_wrapper_new_with_stream(sigstream, GMIME_CONTENT_ENCODING_DEFAULT);
	g_mime_part_set_content(sigpart, wrapper);
	g_object_unref(wrapper);
	g_object_unref(sigstream);
	mps = g_mime_multipart_signed_new();
	g_mime_multipart_add(GMIME_MULTIPART(mps), content);
	g_mime_multipart_add(GMIME_MULTIPART(mps), GMIME_OBJECT(sigpart));
	g_object_unref(content);
	g_object_unref(sigpart);
	g_mime_object_set_content_type_parameter(GMIME_OBJECT(mps), "protocol", "application/pgp-signature");
	g_mime_object_set_content_type_parameter(GMIME_OBJECT(mps), "micalg", micalg);
	g_mime_multipart_set_boundary(GMIME_MULTIPART(mps), NULL);
	return GMIME_OBJECT(mps);
}

/* A part of the multipart/encrypted made here. */
static GMimeObject *
encrypted_subpart(const char *subtype, const char *data, gsize len)
{
	GMimePart *part = g_mime_part_new_with_type("application", subtype);
	g_autoptr(GMimeStream) stream = g_mime_stream_mem_new_with_buffer(data, len);
	GMimeDataWrapper *wrapper = g_mime_data_wrapper_new_with_stream(stream, GMIME_CONTENT_ENCODING_7BIT);

	g_mime_part_set_content(part, wrapper);
	g_object_unref(wrapper);
	g_mime_part_set_content_encoding(part, GMIME_CONTENT_ENCODING_7BIT);
	return GMIME_OBJECT(part);
}

/* RFC 3156 section 4, by one gpg process: the entity encrypted to the
 * recipients' keys (by fingerprint) and signed by
 * signer, armored, in a multipart/encrypted.  GMime's way lists every
 * recipient's key first, a gpg process each, after gpgme's engine probe. */
GMimeObject *
crypto_encrypt_mime(GMimeObject *entity, const char *signer, GPtrArray *recipients, GError **err)
{
	g_autoptr(GPtrArray) args = g_ptr_array_new_with_free_func(g_free);
	g_autoptr(GMimeStream) mem = g_mime_stream_mem_new();
	g_autoptr(GMimeFormatOptions) fo = g_mime_format_options_new();
	g_autoptr(gpgrun_result) r = NULL;
	g_autoptr(GBytes) input = NULL;
	g_autoptr(GError) e = NULL;
	GMimeMultipartEncrypted *mpe;
	GMimeObject *version, *data;
	GByteArray *b;
	gpgrun_opts o = { .home = crypto_homedir, .input_fd = -1, .out_fd = -1, .timeout_ms = 60 * 1000 };

	g_ptr_array_add(args, g_strdup("--armor"));
	g_ptr_array_add(args, g_strdup("--trust-model"));
	g_ptr_array_add(args, g_strdup("always"));
	if (signer != NULL) {
		g_ptr_array_add(args, g_strdup("--local-user"));
		g_ptr_array_add(args, cr_is_fingerprint(signer) ? g_strconcat(signer, "!", NULL) : g_strdup(signer));
		g_ptr_array_add(args, g_strdup("--sign"));
	}
	for (guint i = 0; i < recipients->len; i++) {
		const char *f = g_ptr_array_index(recipients, i);

		/* the key by its fingerprint; without "!", which would
		 * take its primary key, usually one that only signs */
		g_ptr_array_add(args, g_strdup("--recipient"));
		g_ptr_array_add(args, g_strdup(f));
	}
	g_ptr_array_add(args, g_strdup("--encrypt"));
	g_ptr_array_add(args, NULL);
	o.args = (const char *const *) args->pdata;
	/* the entity as it will be read after decryption: CRLF (RFC 3156 4) */
	g_mime_format_options_set_newline_format(fo, GMIME_NEWLINE_FORMAT_DOS);
	g_mime_object_write_to_stream(entity, fo, mem);
	b = g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem));
	input = g_bytes_new(b->data, b->len);
	o.input = input;
	/* armor of a compressed, encrypted entity: never much more than it */
	o.max_out = (gint64) b->len * 2 + 64 * 1024;
	if (gpgrun(&o, &r, &e) != VULNID_OK) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_GENERAL, "%s", e->message);
		return NULL;
	}
	if (!gpgrun_ok(r) || gpgrun_status(r, "END_ENCRYPTION") == NULL ||
	    (signer != NULL && gpgrun_status_count(r, "SIG_CREATED") != 1) || r->out->len == 0) {
		g_set_error(err, GMIME_ERROR, GMIME_ERROR_GENERAL, "cannot encrypt: %s",
			    r->timed_out ? "gpg took too long" : r->message != NULL ? r->message : "gpg failed");
		return NULL;
	}
	mpe = g_mime_multipart_encrypted_new();
	version = encrypted_subpart("pgp-encrypted", "Version: 1\n", strlen("Version: 1\n"));
	data = encrypted_subpart("octet-stream", (const char *) r->out->data, r->out->len);
	g_mime_multipart_add(GMIME_MULTIPART(mpe), version);
	g_mime_multipart_add(GMIME_MULTIPART(mpe), data);
	g_object_unref(version);
	g_object_unref(data);
	g_mime_object_set_content_type_parameter(GMIME_OBJECT(mpe), "protocol", "application/pgp-encrypted");
	g_mime_multipart_set_boundary(GMIME_MULTIPART(mpe), NULL);
	return GMIME_OBJECT(mpe);
}

/* Sign data with signer's key, running gpg directly: for the keys the
 * packets of openpgp.c are not made for (another algorithm, a primary key
 * that cannot sign, an expired key, a signer named otherwise than by its
 * fingerprint).  gpg is told the exact key ("FPR!"); what it says on its
 * status channel is checked: one signature, made by that key. */
static vulnid_status
sign_data_gpg(GBytes *data, const char *signer, gpgme_sig_mode_t mode, GBytes **out, char **micalg,
	  GError **err)
{
	g_autofree char *user = NULL;
	const char *args[] = { "--armor", "--local-user", NULL,
			       mode == GPGME_SIG_MODE_CLEAR ? "--clearsign" : "--detach-sign",
			       mode == GPGME_SIG_MODE_CLEAR ? "--textmode" : NULL, NULL };
	gpgrun_opts o = { .home = crypto_homedir, .args = args, .input_fd = -1, .input = data, .out_fd = -1,
			  .max_out = (gint64) g_bytes_get_size(data) * 2 + 64 * 1024, .timeout_ms = 60 * 1000 };
	g_autoptr(gpgrun_result) r = NULL;
	const char *created;
	vulnid_status s;

	if (signer == NULL || *signer == '\0')
		return vulnid_fail(err, VULNID_ERR_INVALID, "no signing key");
	user = cr_is_fingerprint(signer) ? g_strconcat(signer, "!", NULL) : g_strdup(signer);
	args[2] = user;
	s = gpgrun(&o, &r, err);
	if (s != VULNID_OK)
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot sign with %s", signer);
	created = gpgrun_status(r, "SIG_CREATED");
	if (!gpgrun_ok(r) || created == NULL || gpgrun_status_count(r, "SIG_CREATED") != 1 || r->out->len == 0)
		/* The secret key not usable now (gpg-agent down, a smart card
		 * away) and a key that is gone look alike here: wait. */
		return vulnid_fail(err, VULNID_ERR_TEMP, "cannot sign with %s: %s", signer,
				   r->timed_out ? "gpg took too long" : r->message != NULL ? r->message : "gpg failed");
	{
		/* SIG_CREATED type pk-algo hash-algo class time fingerprint */
		g_auto(GStrv) f = g_strsplit(created, " ", -1);

		if (g_strv_length(f) < 6 ||
		    (cr_is_fingerprint(signer) && g_ascii_strcasecmp(g_strstrip(f[5]), signer) != 0))
			return vulnid_fail(err, VULNID_ERR_INTERNAL, "gpg signed with %s, not %s",
					   g_strv_length(f) >= 6 ? f[5] : "another key", signer);
		if (micalg != NULL) {
			const char *h = gpgme_hash_algo_name((gpgme_hash_algo_t) atoi(f[2]));
			g_autofree char *lower = g_ascii_strdown(h != NULL ? h : "sha256", -1);

			*micalg = g_strconcat("pgp-", lower, NULL);
		}
	}
	*out = g_byte_array_free_to_bytes(g_steal_pointer(&r->out));
	return VULNID_OK;
}

/* --- signatures through gpg-agent -------------------------------------------------- */

/* gpgconf --homedir HOME ARGS...; its output in out. */
static vulnid_status
run_gpgconf(const char *home, const char *a1, const char *a2, GByteArray *out, GError **err)
{
	const char *args[] = { "--homedir", home, a1, a2, NULL };
	gpgrun_opts o = { .tool = "gpgconf", .args = args, .input_fd = -1, .out_fd = -1,
			  .max_out = 64 * 1024, .timeout_ms = 60 * 1000 };
	g_autoptr(gpgrun_result) r = NULL;
	vulnid_status s = gpgrun(&o, &r, err);

	if (s != VULNID_OK)
		return s;
	if (!gpgrun_ok(r))
		return vulnid_fail(err, VULNID_ERR_TEMP, "gpgconf %s %s failed: %s", a1, a2,
				   r->message != NULL ? r->message : "no reason given");
	if (out != NULL)
		g_byte_array_append(out, r->out->data, r->out->len);
	return VULNID_OK;
}

/* Where gpg-agent listens for the keyring home, as gpgconf says: in the
 * keyring directory, or under /run/user/UID when that exists. */
vulnid_status
cr_agent_socket_ask(const char *home, char **path, GError **err)
{
	g_autoptr(GByteArray) out = g_byte_array_new();
	g_autofree char *text = NULL;
	vulnid_status s = run_gpgconf(home, "--list-dirs", "agent-socket", out, err);

	if (s != VULNID_OK)
		return s;
	text = g_strndup((const char *) out->data, out->len);
	g_strchomp(text);
	if (!g_path_is_absolute(text) || strchr(text, '\n') != NULL)
		return vulnid_fail(err, VULNID_ERR_TEMP, "gpgconf named no agent socket for '%s'", home);
	*path = g_steal_pointer(&text);
	return VULNID_OK;
}

/* gpg starts gpg-agent when it is not running, unless gpg.conf says
 * no-autostart; vulnid does as gpg would. */
static gboolean
agent_autostart(const char *home)
{
	g_autofree char *path = g_build_filename(home, "gpg.conf", NULL);
	g_autofree char *text = NULL;
	g_auto(GStrv) lines = NULL;

	if (!g_file_get_contents(path, &text, NULL, NULL))
		return TRUE;
	lines = g_strsplit(text, "\n", -1);
	for (char **l = lines; *l != NULL; l++)
		if (strcmp(g_strstrip(*l), "no-autostart") == 0)
			return FALSE;
	return TRUE;
}

/* One connection to gpg-agent per process, kept for the next signature
 * (a resident server signs many); one signature at a time on it. */
static GMutex agent_lock;
static openpgp_agent *agent;
static pid_t agent_pid;

void
crypto_agent_close(void)
{
	g_mutex_lock(&agent_lock);
	/* one inherited over fork() is the parent's: not closed here, where
	 * a goodbye would end the parent's session */
	if (agent != NULL && agent_pid == getpid())
		openpgp_agent_free(agent);
	agent = NULL;
	g_mutex_unlock(&agent_lock);
}

/* Connect, at the socket remembered or asked for; an agent that is not
 * running is started, as gpg would start it.  Under agent_lock. */
static vulnid_status
agent_open(GError **err)
{
	const char *home = crypto_homedir;
	g_autofree char *socket = NULL;
	g_autoptr(GError) e = NULL;
	gboolean asked = FALSE;
	vulnid_status s;

	if (home == NULL)
		return vulnid_fail(err, VULNID_ERR_CONFIG, "no keyring");
	gpgme_check_version(NULL);	/* SIGPIPE ignored, as for gpgme's own connections */
	g_mutex_lock(&cr_robot_lock);
	if (cr_robot != NULL && cr_robot->socket != NULL && cr_robot->socket_uid == geteuid())
		socket = g_strdup(cr_robot->socket);
	g_mutex_unlock(&cr_robot_lock);
	if (socket == NULL) {
		s = cr_agent_socket_ask(home, &socket, err);
		if (s != VULNID_OK)
			return s;
		asked = TRUE;
	}
	s = openpgp_agent_connect(socket, &agent, &e);
	if (s == VULNID_ERR_NOTFOUND && !asked) {
		/* the socket remembered may have moved (/run/user/UID made) */
		g_autofree char *now = NULL;

		asked = TRUE;
		if (cr_agent_socket_ask(home, &now, NULL) == VULNID_OK && strcmp(now, socket) != 0) {
			g_free(socket);
			socket = g_steal_pointer(&now);
			g_clear_error(&e);
			s = openpgp_agent_connect(socket, &agent, &e);
		}
	}
	if (s == VULNID_ERR_NOTFOUND) {
		if (!agent_autostart(home))
			return vulnid_fail(err, VULNID_ERR_TEMP, "gpg-agent is not running (gpg.conf says "
					   "no-autostart): %s", e->message);
		g_clear_error(&e);
		s = run_gpgconf(home, "--launch", "gpg-agent", NULL, &e);
		if (s == VULNID_OK)
			s = openpgp_agent_connect(socket, &agent, &e);
	}
	if (s != VULNID_OK) {
		g_propagate_error(err, g_steal_pointer(&e));
		return s == VULNID_ERR_NOTFOUND ? VULNID_ERR_TEMP : s;
	}
	agent_pid = getpid();
	if (asked) {
		g_mutex_lock(&cr_robot_lock);
		cr_robot_remember_socket(home, cr_robot, socket);
		g_mutex_unlock(&cr_robot_lock);
	}
	return VULNID_OK;
}

/* PKSIGN on the kept connection, or a new one.  A kept connection that
 * fails may be to an agent restarted since: one more try on a new one. */
static vulnid_status
agent_pksign(const char *keygrip, const guint8 *digest, GBytes **sexp, GError **err)
{
	vulnid_status s;

	g_mutex_lock(&agent_lock);
	if (agent != NULL && agent_pid != getpid())
		agent = NULL;	/* the parent's (see crypto_agent_close()) */
	for (int attempt = 0;; attempt++) {
		gboolean fresh = agent == NULL;
		g_autoptr(GError) e = NULL;

		if (fresh) {
			s = agent_open(err);
			if (s != VULNID_OK)
				break;
		}
		s = openpgp_agent_pksign(agent, keygrip, digest, sexp, &e);
		if (s == VULNID_OK)
			break;
		g_clear_pointer(&agent, openpgp_agent_free);
		if (fresh || attempt > 0) {
			g_propagate_error(err, g_steal_pointer(&e));
			break;
		}
	}
	g_mutex_unlock(&agent_lock);
	return s;
}

/* The robot's key as openpgp.c signs with it, or FALSE when gpg must
 * make the signature: another algorithm, a primary key that cannot sign,
 * an expired key (gpg then says why it cannot sign). */
static gboolean
robot_openpgp_key(const char *signer, openpgp_key *key)
{
	g_autofree char *fpr = NULL;
	gboolean ok = FALSE;
	guint64 bits;

	if (!cr_is_fingerprint(signer))
		return FALSE;
	g_mutex_lock(&cr_robot_lock);
	if (cr_robot_fingerprint(TRUE, &fpr, NULL) != VULNID_OK || g_ascii_strcasecmp(fpr, signer) != 0 ||
	    cr_robot->keygrip == NULL ||
	    (cr_robot->expires != 0 && cr_robot->expires <= g_get_real_time() / G_USEC_PER_SEC))
		ok = FALSE;
	else if (strcmp(cr_robot->algo, "ed25519") == 0)
		ok = openpgp_key_init(key, OPENPGP_PK_EDDSA, 255, cr_robot->fpr, cr_robot->keygrip);
	else if (g_str_has_prefix(cr_robot->algo, "rsa") &&
		 g_ascii_string_to_unsigned(cr_robot->algo + 3, 10, 1024, 16384, &bits, NULL))
		ok = openpgp_key_init(key, OPENPGP_PK_RSA, (guint) bits, cr_robot->fpr, cr_robot->keygrip);
	g_mutex_unlock(&cr_robot_lock);
	return ok;
}

/* The armored signature (type: binary or canonical text) over data. */
static vulnid_status
agent_sign(const openpgp_key *key, const char *signer, guint8 type, const void *data, gsize len,
	   char **armored, GError **err)
{
	g_autoptr(openpgp_sig) sig = openpgp_sig_new(key, type, g_get_real_time() / G_USEC_PER_SEC);
	g_autoptr(GBytes) sexp = NULL, packet = NULL;
	vulnid_status s;

	openpgp_sig_update(sig, data, len);
	s = agent_pksign(key->keygrip, openpgp_sig_digest(sig), &sexp, err);
	if (s == VULNID_OK)
		s = openpgp_sig_finish(sig, g_bytes_get_data(sexp, NULL), g_bytes_get_size(sexp), &packet, err);
	if (s == VULNID_OK)
		*armored = openpgp_armor_signature(packet);
	else if (err != NULL && *err != NULL)
		g_prefix_error(err, "cannot sign with %s: ", signer);
	return s;
}

/* A detached signature over data by signer: through gpg-agent, or by gpg
 * for keys of other kinds.  micalg: "pgp-sha256" or what gpg used. */
static vulnid_status
sign_data(GBytes *data, const char *signer, GBytes **out, char **micalg, GError **err)
{
	openpgp_key key;
	char *armored = NULL;
	vulnid_status s;

	if (!robot_openpgp_key(signer, &key))
		return sign_data_gpg(data, signer, GPGME_SIG_MODE_DETACH, out, micalg, err);
	s = agent_sign(&key, signer, OPENPGP_SIG_BINARY, g_bytes_get_data(data, NULL), g_bytes_get_size(data),
		       &armored, err);
	if (s != VULNID_OK)
		return s;
	*out = g_bytes_new_take(armored, strlen(armored));
	if (micalg != NULL)
		*micalg = g_strdup("pgp-sha256");
	return VULNID_OK;
}

vulnid_status
crypto_clearsign(const char *text, const char *signer, char **out, GError **err)
{
	g_autoptr(GString) shown = g_string_new(NULL);
	g_autoptr(GString) canonical = g_string_new(NULL);
	g_autofree char *armored = NULL;
	openpgp_key key;
	vulnid_status s;

	if (!robot_openpgp_key(signer, &key)) {
		g_autoptr(GBytes) in = g_bytes_new(text, strlen(text));
		g_autoptr(GBytes) sig = NULL;

		s = sign_data_gpg(in, signer, GPGME_SIG_MODE_CLEAR, &sig, NULL, err);
		if (s == VULNID_OK)
			*out = g_strndup(g_bytes_get_data(sig, NULL), g_bytes_get_size(sig));
		return s;
	}
	openpgp_cleartext(text, shown, canonical);
	s = agent_sign(&key, signer, OPENPGP_SIG_TEXT, canonical->str, canonical->len, &armored, err);
	if (s == VULNID_OK)
		*out = openpgp_cleartext_message(shown->str, armored);
	return s;
}

vulnid_status
crypto_sign_detached(GBytes *data, const char *signer, GBytes **sig, GError **err)
{
	return sign_data(data, signer, sig, NULL, err);
}
