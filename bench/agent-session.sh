#!/bin/sh
# A short Claude Code session, played through the real hook entry script with the
# JSON events Claude sends, and shell edits between them (sed -i, rm, mv, a file
# made by a generator). Then one command rewinds to just before turn 2, and every
# byte is checked against the state saved at that moment.
#
#   sh bench/agent-session.sh <empty-dir>     (GIT_CKPT_HOME chooses the store)
# DEMO=1 narrates each step and shows git ckpt log along the way.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")/.." && pwd)
ws=$1
hook="$here/hooks/git-ckpt-hook"
ckpt() { node "$here/dist/bin/main.js" "$@"; }
# Bold only on a terminal: `npm run demo > file` gets plain text.
if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then bold='\033[1m' plain='\033[0m'; else bold='' plain=''; fi
say() { if [ "${DEMO:-}" = 1 ]; then printf "\n${bold}# %s${plain}\n" "$*"; fi; }
show() { if [ "${DEMO:-}" = 1 ]; then printf '$ git ckpt %s\n' "$*"; ckpt "$@"; fi; }
# run: always, and shown with its output in the demo
run() { if [ "${DEMO:-}" = 1 ]; then printf '$ git ckpt %s\n' "$*"; ckpt "$@"; else ckpt "$@" > /dev/null; fi; }
session=8e0f2c4a-demo-session

# event <hook event> <phase> <prompt id> [tool name] [tool input json] [tool use id]
event() {
  payload=$(printf '{"session_id":"%s","prompt_id":"%s","transcript_path":"/tmp/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"%s","tool_name":"%s","tool_input":%s,"tool_use_id":"%s"}' \
    "$session" "$3" "$ws" "$1" "${4:-}" "${5:-null}" "${6:-}")
  send "$2"
}

# prompt <prompt id> <text>: the turn's UserPromptSubmit, with the prompt as Claude sends it (text without quotes)
prompt() {
  payload=$(printf '{"session_id":"%s","prompt_id":"%s","transcript_path":"/tmp/t.jsonl","cwd":"%s","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"%s"}' \
    "$session" "$1" "$ws" "$2")
  send turn-start
}

send() {
  out=$(printf '%s' "$payload" | CLAUDE_PROJECT_DIR="$ws" sh "$hook" claude "$1")
  [ -z "$out" ] || { echo "hook printed something on stdout: $out" >&2; exit 1; }
}

# A listing of every file's bytes and executable bit, .git excluded.
state() { (cd "$ws" && find . -path ./.git -prune -o -type f -print | LC_ALL=C sort | while IFS= read -r f; do printf '%s %s %s\n' "$(cksum < "$f" | tr -s ' ' | cut -d' ' -f1,2)" "$([ -x "$f" ] && echo x || echo -)" "$f"; done); }

cd "$ws"
git init -q
mkdir src
printf 'export function greet(name) {\n  return "hello " + name;\n}\n' > src/greet.js
printf '# my project\n' > README.md
printf 'node_modules/\n' > .gitignore

say 'session starts; turn 1: "make the greeting friendlier"'
event SessionStart session-start ''
prompt p1 'make the greeting friendlier'
event PreToolUse pre p1 Edit "{\"file_path\":\"$ws/src/greet.js\"}" toolu_1
sed 's/hello/hi there/' src/greet.js > src/greet.js.new && mv src/greet.js.new src/greet.js
event PostToolUse post p1 Edit "{\"file_path\":\"$ws/src/greet.js\"}" toolu_1
event PreToolUse pre p1 Bash '{"command":"sed -i.bak s/my/our/ README.md && rm README.md.bak"}' toolu_2
sed -i.bak 's/my/our/' README.md && rm README.md.bak
event PostToolUse post p1 Bash '{"command":"sed -i.bak s/my/our/ README.md && rm README.md.bak"}' toolu_2
event Stop turn-end p1
before_turn_2=$(state)
show log

say 'turn 2: "restructure it" (the agent renames, deletes and generates through the shell)'
prompt p2 'restructure it'
event PreToolUse pre p2 Bash '{"command":"mv src/greet.js src/hello.js && rm README.md && ./gen.sh"}' toolu_3
mv src/greet.js src/hello.js
rm README.md
printf '#!/bin/sh\necho generated\n' > gen.sh && chmod +x gen.sh
./gen.sh > src/generated.txt
event PostToolUse post p2 Bash '{"command":"mv src/greet.js src/hello.js && rm README.md && ./gen.sh"}' toolu_3
event PreToolUse pre p2 Write "{\"file_path\":\"$ws/src/hello.js\"}" toolu_4
printf 'export const hello = () => "broken";\n' > src/hello.js
event PostToolUseFailure post p2 Write "{\"file_path\":\"$ws/src/hello.js\"}" toolu_4
event Stop turn-end p2

say 'turn 3: the agent keeps going'
prompt p3 'keep going'
event PreToolUse pre p3 Bash '{"command":"echo tmp > scratch.txt"}' toolu_5
echo tmp > scratch.txt
event PostToolUse post p3 Bash '{"command":"echo tmp > scratch.txt"}' toolu_5
event Stop turn-end p3
show log

after_turn_3=$(state)
say 'rewind to just before turn 2, in one command: first what it would do, then do it (files made since are removed too)'
show restore turn:2 --dry-run --delete-new
run restore turn:2 --delete-new
check() {
  if [ "$(state)" != "$1" ]; then
    echo "$2: mismatch" >&2
    printf 'expected:\n%s\n\ngot:\n%s\n' "$1" "$(state)" >&2
    exit 1
  fi
}
check "$before_turn_2" 'rewind to before turn 2'
say 'every byte matches the state before turn 2; the rewind itself is undone in one command'
run undo
check "$after_turn_3" 'undo of the rewind'
echo "agent session: rewound to before turn 2 and back again, every byte checked both ways"
