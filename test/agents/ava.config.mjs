// The real-agents suite (npm run test:agents): slow, spawns the agent CLIs.
export default {
  files: ['test/agents/*.test.mjs'],
  timeout: '10m',
  concurrency: 2,
  workerThreads: false,
  verbose: true,
};
