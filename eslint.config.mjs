// @ts-check
import tseslint from 'typescript-eslint';
import layers from './scripts/eslint/layers.mjs';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'node_modules/**',
      'coverage/**',
      'artifacts/**',
      'data/**',
      'bench/**',
      'test/hosts/**',
      'scripts/**',
      'packages/client/dist/**',
      'packages/client/scripts/**',
      'packages/client/src/schema-types.generated.ts',
      'eslint.config.mjs',
      'jest.config.js',
    ],
  },
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
    },
  },
  {
    files: ['src/**/*.ts', 'packages/client/src/**/*.ts'],
    plugins: { layers },
    rules: { 'layers/no-restricted-paths': 'error', 'layers/no-database-names': 'error' },
  },
  {
    // Specs read loosely typed JSON responses; the assertions are the type check there.
    files: ['test/**/*.ts', 'src/**/*.spec.ts', 'packages/client/src/**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
);
