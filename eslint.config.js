import js from '@eslint/js'
import tseslint from 'typescript-eslint'
import doors from './eslint/doors.js'

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
    // each folder of src/ has one door, its index.ts: no import past it from src/ or bench/, and
    // no import that closes a loop between folders (eslint/doors.js)
    files: ['src/**/*.ts', 'bench/**/*.ts'],
    plugins: { doors },
    rules: { 'doors/through-the-door': 'error', 'doors/no-folder-loop': 'error' }
  },
  {
    files: ['bin/kith', '**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } }
  }
)
