import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'runs/',
      'bench/results/',
      'graphs/neo4j-launcher/',
      'dist/',
      '**/*.tmp.*',
      'bench/_*',
      'scratch/',
      '.venv/',
      'test-artifacts/',
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
    },
  },
);
