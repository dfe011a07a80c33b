import { defineConfig } from 'vitest/config';

// Files that measure time or hold a process-wide resource (ports, child `npm start` processes, pacing windows) run
// one at a time after the rest, so another file's CPU cannot slow what they measure. Everything else runs two files
// at a time: most wait on loopback I/O and timers, and one worker (Vitest's default on 2 cores) leaves a core idle.
const alone = [
  'test/browser/dashboard-budget.test.ts',
  'test/integration/cli.test.ts',
  'test/integration/cli-auth-cache.test.ts',
  'test/integration/cli-console.test.ts',
  'test/integration/cli-restart.test.ts',
  'test/integration/crash-recovery.test.ts',
  'test/integration/delivery-timeout.test.ts',
  'test/integration/guides.test.ts',
  'test/integration/inbound-hostile.test.ts',
  'test/integration/listen.test.ts',
  'test/integration/listen-floods.test.ts',
  'test/integration/send-fairness.test.ts',
  'test/integration/smtp-connection-limits.test.ts',
  'test/integration/tenant-isolation.test.ts',
  'test/integration/webhook-rate-limit.test.ts',
];

export default defineConfig({
  test: {
    setupFiles: ['test/setup.ts'],
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: { name: 'side-by-side', include: ['test/**/*.test.ts'], exclude: alone, maxWorkers: 2 },
      },
      {
        extends: true,
        test: { name: 'alone', include: alone, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
