#!/bin/bash
. "$(dirname "$0")/test-lib.sh"
test_done
