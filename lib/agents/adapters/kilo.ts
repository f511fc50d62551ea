import { busEnvelope, busMcp, busPlugin, loadedAtStart, userFile, type AgentAdapter } from '../adapter.js';

/** Kilo Code's CLI, an OpenCode fork: the same plugin API. */
export const kilo = {
  name: 'kilo',
  title: 'Kilo Code CLI',
  payload: { projectDirEnv: [], normalize: busEnvelope },
  output: { neutral: '', systemMessage: false },
  // User plugins live under the XDG config home.
  wiring: busPlugin({
    project: '.kilo/plugin/git-ckpt.js',
    user: userFile('.config/kilo/plugin/git-ckpt.js', { variable: 'XDG_CONFIG_HOME', file: 'kilo/plugin/git-ckpt.js' }),
  }),
  trust: loadedAtStart('Kilo Code CLI'),
  mcp: busMcp('kilo.json', userFile('.config/kilo/kilo.json', { variable: 'XDG_CONFIG_HOME', file: 'kilo/kilo.json' })),
  readme: {
    tested: '7.7.7',
    wiredThrough: 'the same plugin in `.kilo/plugin/`',
    waits: '97 ms',
    gaps: 'a tool that throws gets no post (the same plugin API)',
  },
} as const satisfies AgentAdapter;
