#!/usr/bin/env bash
# npm run demo: the main job in a throwaway workspace: an "agent" edits files,
# partly through the shell, git-ckpt checkpoints each step, and we look back.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
demo="$(mktemp -d)"
trap 'rm -rf "$demo"' EXIT
export GIT_CKPT_HOME="$demo/store"
ckpt() { echo "\$ git ckpt $*"; node "$here/dist/cli/main.js" "$@"; echo; }
mkdir "$demo/project" && cd "$demo/project"
git init -q
printf 'export const greet = (name) => "hello " + name;\n' > greet.js
printf '# demo\n' > README.md
ckpt init
echo '--- the agent edits greet.js, then runs shell commands (sed -i, rm, a generator)'
sed -i 's/hello/hi/' greet.js
ckpt snapshot --session demo --turn 1 --step 1 --tool Edit --kind post
rm README.md
printf 'generated\n' > gen.txt
ckpt snapshot --session demo --turn 1 --step 2 --tool Bash --kind post -m 'rm README.md && ./generate'
ckpt log
ckpt show latest --stat
echo '--- a change nobody has checkpointed yet'
printf '// TODO\n' >> greet.js
ckpt diff
ckpt status
