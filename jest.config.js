/**
 * Four tiers, one config. Integration and chaos tiers share one dev stack per run (global setup starts
 * Temporal + MinIO + emulator on free ports and bundles the workflows once); unit tests need nothing running; the
 * workflow tier runs the real workflows on the SDK's time-skipping test server (one per file) with fake activities
 * (its global setup bundles the workflows once).
 */
// The CLI's child processes run this checkout's sources, never an older build left in lib/ (bin/sapi-temporal.js).
process.env.SAPI_TEMPORAL_FROM_SOURCES = '1';
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];
const common = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
};
module.exports = {
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.test.ts'], setupFilesAfterEnv: ['<rootDir>/test/harness/timeout-unit.ts'] },
    {
      ...common,
      displayName: 'workflow',
      testMatch: ['<rootDir>/test/workflow/**/*.test.ts'],
      globalSetup: '<rootDir>/test/workflow/harness/global-setup.ts',
      setupFiles: ['<rootDir>/test/harness/setup-runtime.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/workflow/harness/timeout.ts'],
    },
    {
      ...common,
      displayName: 'integration',
      testMatch: ['<rootDir>/test/integration/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
      setupFiles: ['<rootDir>/test/harness/setup-runtime.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/harness/timeout-integration.ts'],
    },
    {
      ...common,
      displayName: 'chaos',
      testMatch: ['<rootDir>/test/chaos/**/*.test.ts'],
      globalSetup: '<rootDir>/test/harness/global-setup.ts',
      globalTeardown: '<rootDir>/test/harness/global-teardown.ts',
      setupFiles: ['<rootDir>/test/harness/setup-runtime.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/harness/timeout-chaos.ts'],
    },
  ],
};
