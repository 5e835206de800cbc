/**
 * Unit specs sit beside the code (src/**\/*.spec.ts, packages/client/src/**\/*.spec.ts); specs
 * that reach into internals live in test/integration; test/e2e speaks only HTTP, the CLI or the
 * browser.
 */
module.exports = {
  testEnvironment: 'node',
  rootDir: '.',
  testMatch: [
    '<rootDir>/src/**/*.spec.ts',
    '<rootDir>/packages/client/src/**/*.spec.ts',
    '<rootDir>/test/integration/**/*.spec.ts',
    '<rootDir>/test/e2e/**/*.e2e-spec.ts',
  ],
  transform: {
    '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.test.json' }],
  },
  moduleFileExtensions: ['ts', 'js', 'json'],
  // The client package is ES modules: its relative imports name the .js file tsc will emit.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  // The host fixtures are separate projects with their own runners (scripts/test-hosts.js).
  modulePathIgnorePatterns: ['<rootDir>/test/hosts/'],
  testTimeout: 120000,
};
