import tseslint from 'typescript-eslint';
import house from './house.cjs';

// The house's code (house.cjs: the floor, the rooms and the roof in src/, and scripts/): files of at
// most 400 lines and functions of at most 120, so that each reads in one sitting. Tests and
// benchmarks are left out: a suite's describe block is long by nature.
const CODE = [house.floor, ...house.rooms, 'src', 'scripts'];

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
  // CommonJS configuration (.dependency-cruiser.cjs reads house.cjs) loads with require.
  { files: ['**/*.cjs'], rules: { '@typescript-eslint/no-require-imports': 'off' } },
  {
    files: CODE.map((d) => `${d}/**/*.{ts,mjs}`),
    rules: {
      'max-lines': ['error', { max: 400, skipBlankLines: false, skipComments: false }],
      'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false }],
    },
  },
);
