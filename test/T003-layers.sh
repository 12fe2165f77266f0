#!/bin/bash
# T003-layers: the include graph of src/ follows the layers (doc/ARCHITECTURE.md):
# src/util includes nothing of src/lib or src/cmd, src/lib nothing of src/cmd,
# the modules of src/lib include one another without a cycle, and only the
# database layer (src/lib/store*.c) touches SQLite.
. "$(dirname "$0")/test-lib.sh"

LAYERS="$VULNID_SRCDIR/test/layers.py"

# A tree with a .c and .h per name in the given layer: body lines are the
# include lines of that file.
tree_file() {
	mkdir -p "$TMP/tree/src/$1" &&
	printf '%s\n' "${@:3}" >"$TMP/tree/src/$1/$2"
}

test_expect_success 'the source tree has no include cycle and no upward include' '
	"$PYTHON" "$LAYERS" "$VULNID_SRCDIR" >"$TMP/out" || { cat "$TMP/out"; false; }
'

test_expect_success 'intake, lifecycle, notify and embargo no longer form a cycle' '
	"$PYTHON" "$LAYERS" "$VULNID_SRCDIR" --dump >"$TMP/dump" &&
	! grep -E "^(notify|embargo|mailctx) -> .*\blifecycle\b" "$TMP/dump" &&
	! grep -E "^(mailctx|lifecycle|notify|embargo) -> .*\bintake\b" "$TMP/dump" &&
	grep -E "^intake -> .*\blifecycle\b" "$TMP/dump"
'

test_expect_success 'the check finds a cycle between two modules' '
	rm -rf "$TMP/tree" && mkdir -p "$TMP/tree/src/util" "$TMP/tree/src/cmd" &&
	tree_file lib a.h "#include \"b.h\"" && tree_file lib a.c "#include \"a.h\"" &&
	tree_file lib b.h "" && tree_file lib b.c "#include \"b.h\"" "#include \"c.h\"" &&
	tree_file lib c.h "" && tree_file lib c-part.c "#include \"a.h\"" &&
	rc=0; "$PYTHON" "$LAYERS" "$TMP/tree" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "exit status" &&
	expect_match "include cycle among src/lib modules: a b c" "$TMP/out"
'

test_expect_success 'the check finds src/util including src/lib, and src/lib src/cmd' '
	rm -rf "$TMP/tree" && mkdir -p "$TMP/tree/src/lib" &&
	tree_file util u.c "#include \"l.h\"" && tree_file util u.h "" &&
	tree_file lib l.c "#include \"cli.h\"" && tree_file lib l.h "" &&
	tree_file cmd cli.h "" &&
	rc=0; "$PYTHON" "$LAYERS" "$TMP/tree" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "exit status" &&
	expect_match "src/util/u.c includes src/lib/l.h" "$TMP/out" &&
	expect_match "src/lib/l.c includes src/cmd/cli.h" "$TMP/out"
'

test_expect_success 'the check finds SQLite outside src/lib/store*.c' '
	rm -rf "$TMP/tree" && mkdir -p "$TMP/tree/src/util" "$TMP/tree/src/cmd" &&
	tree_file lib store.h "" && tree_file lib store.c "#include <sqlite3.h>" "int x(void) { return sqlite3_step(0); }" &&
	tree_file lib store-db.h "#include <sqlite3.h>" &&
	tree_file lib store-thing.c "#include \"store-db.h\"" &&
	tree_file lib intake.h "" && tree_file lib intake.c "#include \"store-db.h\"" &&
	tree_file cmd cmd-queue.c "static int n(void) { return sqlite3_changes(db); }" &&
	rc=0; "$PYTHON" "$LAYERS" "$TMP/tree" >"$TMP/out" || rc=$?
	expect_eq 1 "$rc" "exit status" &&
	expect_match "src/lib/intake.c:1: SQLite outside the database layer" "$TMP/out" &&
	expect_match "src/cmd/cmd-queue.c:1: SQLite outside the database layer" "$TMP/out" &&
	! grep -q "^src/lib/store" "$TMP/out"
'

test_done
