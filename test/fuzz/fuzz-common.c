/* fuzz-common.c - helpers shared by the fuzz targets (see fuzz.h) */
#include "autoconfig.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <gpgme.h>
#include <gmime/gmime.h>

#include "gpgrun.h"
#include "fuzz.h"
#include "text.h"

#ifndef FUZZ_TOP_SRCDIR
#define FUZZ_TOP_SRCDIR "."
#endif

const char *
fuzz_template_dir(void)
{
	const char *env = g_getenv("VULNID_TEMPLATE_DIR");

	return env != NULL && *env != '\0' ? env : FUZZ_TOP_SRCDIR "/templates";
}

void
fuzz_fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("fuzz: property violated: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	abort();
}

void
fuzz_rm_rf(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	if (d == NULL) {
		unlink(path);
		return;
	}
	while ((de = readdir(d)) != NULL) {
		g_autofree char *p = NULL;
		struct stat sb;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		p = g_build_filename(path, de->d_name, NULL);
		if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode))
			fuzz_rm_rf(p);
		else
			unlink(p);
	}
	closedir(d);
	rmdir(path);
}

static GPtrArray *scratch_dirs;

static void
scratch_cleanup(void)
{
	for (guint i = 0; scratch_dirs != NULL && i < scratch_dirs->len; i++)
		fuzz_rm_rf(g_ptr_array_index(scratch_dirs, i));
}

char *
fuzz_scratch_dir(const char *name)
{
	const char *base = g_getenv("TMPDIR");
	g_autofree char *tmpl = NULL;
	char *dir;

	if ((base == NULL || *base == '\0') && g_file_test("/dev/shm", G_FILE_TEST_IS_DIR) &&
	    access("/dev/shm", W_OK) == 0)
		base = "/dev/shm";
	if (base == NULL || *base == '\0')
		base = "/tmp";
	tmpl = g_strdup_printf("%s/vulnid-fuzz-%s.XXXXXX", base, name);
	dir = g_mkdtemp_full(tmpl, 0700);
	if (dir == NULL)
		fuzz_fail("cannot create a directory like '%s': %s", tmpl, g_strerror(errno));
	if (scratch_dirs == NULL) {
		scratch_dirs = g_ptr_array_new_with_free_func(g_free);
		atexit(scratch_cleanup);
	}
	g_ptr_array_add(scratch_dirs, g_strdup(dir));
	return g_strdup(dir);
}

char *
fuzz_text(const uint8_t *data, size_t size)
{
	g_autofree char *valid = NULL;

	if (memchr(data, '\0', size) != NULL)
		return NULL;
	valid = g_utf8_make_valid((const char *) data, (gssize) size);
	return text_normalize_newlines(valid);
}

void
fuzz_no_gpg(void)
{
	gpgme_check_version(NULL);
	gpgme_set_engine_info(GPGME_PROTOCOL_OpenPGP, "/nonexistent/vulnid-fuzz/gpg", "/nonexistent");
	gpgme_set_engine_info(GPGME_PROTOCOL_CMS, "/nonexistent/vulnid-fuzz/gpgsm", "/nonexistent");
	g_setenv("GNUPGHOME", "/nonexistent/vulnid-fuzz", TRUE);
	gpgrun_set_gpg_path("/nonexistent/vulnid-fuzz/gpg");
}

gboolean
fuzz_known_open(const char *key)
{
	static char *known;
	static gboolean loaded;

	if (!loaded) {
		const char *path = g_getenv("FUZZ_KNOWN_OPEN");

		loaded = TRUE;
		if (path != NULL && *path != '\0')
			g_file_get_contents(path, &known, NULL, NULL);
	}
	return known != NULL && strstr(known, key) != NULL;
}

static gboolean
empty_status_part(GMimeObject *o, int depth)
{
	GMimeContentType *ct;

	if (o == NULL || depth > 8)
		return FALSE;
	if (GMIME_IS_MULTIPART(o)) {
		for (int i = 0; i < g_mime_multipart_get_count(GMIME_MULTIPART(o)) && i < 20; i++)
			if (empty_status_part(g_mime_multipart_get_part(GMIME_MULTIPART(o), i), depth + 1))
				return TRUE;
		return FALSE;
	}
	ct = g_mime_object_get_content_type(o);
	if (GMIME_IS_PART(o) && ct != NULL &&
	    (g_mime_content_type_is_type(ct, "message", "delivery-status") ||
	     g_mime_content_type_is_type(ct, "message", "global-delivery-status") ||
	     g_mime_content_type_is_type(ct, "text", "rfc822-headers"))) {
		GMimeDataWrapper *w = g_mime_part_get_content(GMIME_PART(o));
		GMimeStream *mem = g_mime_stream_mem_new();
		gboolean empty = w == NULL || g_mime_data_wrapper_write_to_stream(w, mem) < 0 ||
				 g_mime_stream_mem_get_byte_array(GMIME_STREAM_MEM(mem))->len == 0;

		g_object_unref(mem);
		return empty;
	}
	return FALSE;
}

gboolean
fuzz_has_empty_dsn_part(const uint8_t *data, size_t size)
{
	GMimeStream *mem = g_mime_stream_mem_new_with_buffer((const char *) data, size);
	GMimeParser *parser = g_mime_parser_new_with_stream(mem);
	GMimeMessage *msg;
	gboolean r = FALSE;

	g_mime_parser_set_format(parser, GMIME_FORMAT_MESSAGE);
	msg = g_mime_parser_construct_message(parser, NULL);
	if (msg != NULL) {
		r = empty_status_part(g_mime_message_get_mime_part(msg), 0);
		g_object_unref(msg);
	}
	g_object_unref(parser);
	g_object_unref(mem);
	return r;
}
