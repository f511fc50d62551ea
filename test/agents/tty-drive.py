# Drive an interactive terminal program as a person would: start it on a pseudo-terminal of 120x40,
# then for each step wait for a text on its screen (or a number of seconds), and type keys. Python's
# pty module is in every python3 on Linux and macOS; Node has no pseudo-terminal of its own.
#
# argv[1]: JSON {"argv": [...], "cwd": "...", "env": {...}, "steps": [[wait_regex_or_null, keys, seconds], ...]}
# A step ["until:REGEX", key, n] presses key (n times at most) until REGEX is on the screen: a cursor
# moved to the entry it names.
# Prints the screen text (escape sequences removed) seen while each step waited, then "--- end ---".
import fcntl, json, os, pty, re, select, signal, struct, sys, termios, time

config = json.loads(sys.argv[1])
pid, fd = pty.fork()
if pid == 0:
    os.chdir(config['cwd'])
    os.execve(config['argv'][0], config['argv'], config['env'])
fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 120, 0, 0))
seen = b''


def pump(seconds):
    global seen
    end = time.time() + seconds
    while time.time() < end:
        ready, _, _ = select.select([fd], [], [], 0.05)
        if fd in ready:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            seen += data
    return True


def screen():
    return re.sub(rb'\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\x1b[()][A-Z0-9]', b'', seen).decode('utf8', 'replace')


def press(keys):
    # An escape sequence goes in one write (ESC alone is the Escape key); text a key at a time.
    if keys.startswith('\x1b'):
        os.write(fd, keys.encode())
        pump(0.3)
    else:
        for key in keys:
            os.write(fd, key.encode())
            pump(0.08)


for wait, keys, seconds in config['steps']:
    started = time.time()
    if wait and wait.startswith('until:'):
        pattern = wait[len('until:'):]
        pump(0.5)
        found = bool(re.search(pattern, screen()[-4000:]))
        for _ in range(int(seconds)):
            if found:
                break
            seen = b''
            press(keys)
            pump(0.3)
            found = bool(re.search(pattern, screen()))
        sys.stdout.write(f'--- {wait} ({"found" if found else "not found"}) ---\n{screen()[-3000:]}\n')
        seen = b''
        continue
    if wait:
        while not re.search(wait, screen()[-8000:]) and time.time() - started < seconds:
            if not pump(0.25):
                break
    else:
        pump(seconds)
    sys.stdout.write(f'--- {wait or "pause"} ---\n{screen()[-3000:]}\n')
    seen = b''
    press(keys)
pump(1)
sys.stdout.write(f'--- end ---\n{screen()[-3000:]}\n')
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
