#!/bin/sh
# npm run demo: an agent session played visibly in a throwaway workspace. Claude
# Code's real hook events go through the shipped entry script, the "agent" edits
# files through tools and through the shell, and one command rewinds to just
# before turn 2 (every byte is checked).
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
demo=$(mktemp -d)
trap 'rm -rf "$demo"' EXIT
mkdir "$demo/project"
GIT_CKPT_HOME="$demo/store" DEMO=1 sh "$here/bench/agent-session.sh" "$demo/project"
