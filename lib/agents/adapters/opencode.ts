import { busEnvelope, busMcp, busPlugin, loadedAtStart, userFile, type AgentAdapter } from '../adapter.js';

/** OpenCode: an in-process plugin forwards its bus events (hooks/bus-plugin.js). */
export const opencode = {
  name: 'opencode',
  title: 'OpenCode',
  payload: { projectDirEnv: [], normalize: busEnvelope },
  output: { neutral: '', systemMessage: false },
  // User plugins live under the XDG config home.
  wiring: busPlugin({
    project: '.opencode/plugins/git-ckpt.js',
    user: userFile('.config/opencode/plugins/git-ckpt.js', { variable: 'XDG_CONFIG_HOME', file: 'opencode/plugins/git-ckpt.js' }),
  }),
  trust: loadedAtStart('OpenCode'),
  mcp: busMcp('opencode.json', userFile('.config/opencode/opencode.json', { variable: 'XDG_CONFIG_HOME', file: 'opencode/opencode.json' })),
  readme: {
    tested: '1.18.33',
    wiredThrough: 'a plugin in `.opencode/plugins/`',
    waits: '108 ms',
    gaps: "a tool that throws gets no post; OpenCode 2's plugin API not wired (not on the registry)",
  },
} as const satisfies AgentAdapter;
