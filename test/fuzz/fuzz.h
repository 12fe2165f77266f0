/* fuzz.h - shared by the fuzz targets in test/fuzz/
 *
 * Each target defines LLVMFuzzerTestOneInput (and, where it needs set-up,
 * LLVMFuzzerInitialize).  With --enable-fuzzing they link against
 * libFuzzer (test/fuzz/fuzz-NAME); in every build they also link against
 * standalone.c (test/fuzz/replay-NAME), which runs given files once each,
 * so that the seed corpora and every crash ever found are replayed by
 * `make check` (T950), under ASan and UBSan in the sanitizer build. */
#ifndef VULNID_FUZZ_H
#define VULNID_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <glib.h>

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The fixed clock of every target (VULNID_TEST_NOW): results must not
 * depend on the day a crash is replayed. */
#define FUZZ_NOW "2026-06-01T12:00:00Z"

/* The source tree's templates/ (VULNID_TEMPLATE_DIR wins). */
const char *fuzz_template_dir(void);

/* A new private directory under $TMPDIR (or /dev/shm, where fsync is
 * free), removed at exit.  Aborts on failure. */
char *fuzz_scratch_dir(const char *name);

/* Remove a directory tree (no symlinks followed). */
void fuzz_rm_rf(const char *path);

/* Text as the message layer hands it on: NULL when it holds a NUL byte
 * (such mail never reaches the parsers), else valid UTF-8 with \n line
 * ends. */
char *fuzz_text(const uint8_t *data, size_t size);

/* Keep gpgme from starting gpg or gpgsm: every crypto operation then
 * fails at once with "invalid engine", as on a host without GnuPG. */
void fuzz_no_gpg(void);

/* Whether a bug is listed as known and open: the file named by
 * $FUZZ_KNOWN_OPEN (fuzz-smoke sets it to regressions/KNOWN-OPEN) names
 * an input containing key.  A target then skips that one check, so that
 * the fuzzer looks for new bugs instead of finding the known one again. */
gboolean fuzz_known_open(const char *key);

/* Whether data, parsed as a mail, has an empty message/delivery-status or
 * text/rfc822-headers part where dsn_parse() looks (a known crash while it
 * is open). */
gboolean fuzz_has_empty_dsn_part(const uint8_t *data, size_t size);

/* abort() with a message: a property the code promises does not hold. */
void fuzz_fail(const char *fmt, ...) G_GNUC_PRINTF(1, 2) G_GNUC_NORETURN;

#endif
