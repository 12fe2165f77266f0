/* standalone.c - run a fuzz target without libFuzzer: each file named on
 * the command line (directories: every file in them, sorted) is given to
 * LLVMFuzzerTestOneInput once.  This is how the seed corpora and the
 * regression inputs run in `make check`, with any compiler. */
#include "autoconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

static guint
run_file(const char *path, gboolean verbose)
{
	g_autofree char *data = NULL;
	g_autoptr(GError) e = NULL;
	gsize len;

	if (!g_file_get_contents(path, &data, &len, &e)) {
		fprintf(stderr, "cannot read '%s': %s\n", path, e->message);
		exit(2);
	}
	if (verbose)
		fprintf(stderr, "running %s (%zu bytes)\n", path, (size_t) len);
	/* A copy of exactly len bytes, so that ASan sees reads past the end. */
	{
		uint8_t *copy = g_memdup2(data, len);

		LLVMFuzzerTestOneInput(copy, len);
		g_free(copy);
	}
	return 1;
}

static guint
run_path(const char *path, gboolean verbose)
{
	g_autoptr(GDir) d = NULL;
	g_autoptr(GPtrArray) names = NULL;
	const char *n;
	guint count = 0;

	if (!g_file_test(path, G_FILE_TEST_IS_DIR))
		return run_file(path, verbose);
	d = g_dir_open(path, 0, NULL);
	if (d == NULL)
		return 0;
	names = g_ptr_array_new_with_free_func(g_free);
	while ((n = g_dir_read_name(d)) != NULL)
		if (n[0] != '.' && strcmp(n, "README") != 0)
			g_ptr_array_add(names, g_build_filename(path, n, NULL));
	qsort(names->pdata, names->len, sizeof(char *), cmp_str);
	for (guint i = 0; i < names->len; i++)
		count += run_path(g_ptr_array_index(names, i), verbose);
	return count;
}

int
main(int argc, char **argv)
{
	gboolean verbose = g_getenv("FUZZ_VERBOSE") != NULL;
	guint count = 0;

	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++)
		count += run_path(argv[i], verbose);
	printf("ran %u input%s\n", count, count == 1 ? "" : "s");
	return 0;
}
