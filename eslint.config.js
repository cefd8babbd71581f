import js from '@eslint/js'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  // contracts/ is AssemblyScript (decorators on declarations), checked by asc, not by tsc or eslint
  { ignores: ['dist/**', 'node_modules/**', '.kith/**', 'contracts/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error'
    }
  },
  {
    files: ['bin/kith', '**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } }
  }
)
