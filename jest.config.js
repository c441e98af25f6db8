// Three kinds of test, told apart by name: *.spec.ts (pure logic, beside the code),
// *.int-spec.ts (real PostgreSQL / Redis / .NET host), *.e2e-spec.ts (real HTTP, WebSocket).
const tsJest = ['ts-jest', { tsconfig: 'tsconfig.json' }];
const common = {
  // Node's environment, plus a reaper of service processes a failed test left running (see the file).
  testEnvironment: '<rootDir>/test/support/reaping-environment.js',
  transform: { '^.+\\.ts$': tsJest },
  moduleFileExtensions: ['ts', 'js', 'json'],
};
module.exports = {
  testTimeout: 60000,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.spec.ts'] },
    { ...common, displayName: 'integration', testMatch: ['<rootDir>/test/**/*.int-spec.ts'] },
    { ...common, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.e2e-spec.ts'] },
  ],
};
