/** The moments of an agent's work that a hook reports, in every agent's vocabulary mapped to these. */
export const PHASES = ['pre', 'post', 'turn-start', 'turn-end', 'session-start', 'subagent-end'] as const;
export type Phase = (typeof PHASES)[number];
