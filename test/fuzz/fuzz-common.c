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
